"""Type stubs of the native module claimdag._claimdag (checked with mypy.stubtest).

Every closed set of words is a ``Literal`` alias below, and every dict the module hands out
or takes is a ``TypedDict``, so a type checker refuses ``status="don"`` or a misspelt plan
field. The aliases are private to the stubs: annotate with them under ``TYPE_CHECKING``
(``from claimdag._claimdag import _Status``; pyright's strict mode wants a
``# pyright: ignore[reportPrivateUsage]`` there), or let the checker infer them.

Arguments, as everywhere in claimdag (docs/python.md):

- a node is a full 32-hex id, a unique prefix of at least 8 hex characters, or the
  ``a84a4bf2...`` form ``list`` prints; a malformed or ambiguous one is ``InvalidInput``,
  one that matches no node ``NotFound``;
- an actor (``assignee``, ``actor``, ``holder``) is 32 hex characters or ``name:NAME``; a
  malformed one is ``InvalidInput``;
- a duration (``ttl``, ``wait``, ``lease``, ``retry_in``, ...) is seconds as an int or a
  float, or a ``datetime.timedelta``; negative, NaN or too long is ``InvalidInput``, another
  type a ``TypeError``;
- an integer (``gen``, ``priority``, ``estimate``, ``max_attempts``, ``max_held``) is an
  int (a bool is a ``TypeError``); out of range is ``InvalidInput``.

Every method of a store may also raise ``StoreIOError`` (the OS refused a read or a write),
``CorruptStore`` (a file of the store is damaged) and ``InternalError`` (a bug); the Raises
sections below leave them out. A refused call changes nothing.
"""

import builtins
import os
from collections.abc import Callable, Coroutine, Sequence
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    Optional,
    Union,
    final,
    overload,
)

if TYPE_CHECKING:
    from claimdag.aio import AsyncLeaseNext
    from claimdag.exceptions import ClaimdagError as ClaimdagErrorLike

__all__ = [
    "__version__",
    "CODES",
    "Store",
    "Node",
    "Event",
    "Pick",
    "Report",
    "Settings",
    "CancelRequest",
    "Grant",
    "Lease",
    "LeaseNext",
    "Watch",
    "actor",
]

# The types of replies and arguments live in claimdag.types (public, importable).
from claimdag.types import (
    Status as _Status,
    Finished as _Finished,
    DisplayWord as _DisplayWord,
    ListStatus as _ListStatus,
    EventVerb as _EventVerb,
    ErrorCode as _ErrorCode,
    ErrorName as _ErrorName,
    GraphFormat as _GraphFormat,
    OnError as _OnError,
    Verb as _Verb,
    Duration as _Duration,
    When as _When,
    Json as _Json,
    Plan as _Plan,
    Completion as _Completion,
    CancelRequestDict as _CancelRequestDict,
    NodeDict as _NodeDict,
    EventDict as _EventDict,
    PickDict as _PickDict,
    ReportDict as _ReportDict,
    SettingsDict as _SettingsDict,
    GrantDict as _GrantDict,
)

# -- The module ----------------------------------------------------------------------------

#: The version of the Rust workspace, as ``claimdag --version`` prints it.
__version__: str

#: The core's table of error codes, in numeric order: (variant name, code, C value, exit
#: status, meaning). claimdag.exceptions builds its classes from it.
CODES: tuple[tuple[_ErrorName, _ErrorCode, int, int, str], ...]

@final
class CancelRequest:
    """A request that the holder of a claim stop (``Store.cancel`` of a claimed node): who
    asked, why, and when. The holder learns it at its next renewal; it should stop and
    complete the node ``"cancelled"`` (or finish it)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def by(self) -> Optional[str]:
        """The actor that asked (32 hex characters), or None when it named none."""
    @property
    def reason(self) -> Optional[str]:
        """Why, in the asker's words, or None."""
    @property
    def at(self) -> int:
        """When it was asked, in milliseconds since the Unix epoch."""
    def to_dict(self) -> _CancelRequestDict:
        """The request as a dict.

        Returns:
            ``{"by", "reason", "at"}``, as the CLI's ``--json`` gives ``cancel_requested``.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Grant:
    """A claim granted (``claim(..., details=True)``, ``claim_next(..., details=True)``,
    ``claim_next_many``, a lease's ``grant``): the node and its new generation (the fencing
    token), and what the node hands its new holder: the last checkpoint an earlier holder
    left, and the outputs of its prerequisites that are done."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def id(self) -> str:
        """The node's id (32 hex characters)."""
    @property
    def generation(self) -> int:
        """The node's new generation: the fencing token to renew, release and complete with."""
    @property
    def resumed(self) -> bool:
        """True when this is a claim the actor already held (``claim_next(resume=True)``)."""
    @property
    def progress(self) -> Optional[str]:
        """The last checkpoint an earlier holder left (``renew(progress=...)``), or None."""
    @property
    def progress_at(self) -> Optional[int]:
        """When that checkpoint was left (milliseconds since the Unix epoch), or None."""
    @property
    def inputs(self) -> dict[str, _Json]:
        """``{prerequisite id: its output}`` for every prerequisite that is done (None for
        one that gave no output); a fresh dict on each read."""
    def to_dict(self) -> _GrantDict:
        """The grant as a dict.

        Returns:
            The keys of the CLI's ``claim --json``; ``resumed`` only when it is true.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Node:
    """One node: every field of the store, plus the derived display word, readiness and why
    it is not ready. An immutable snapshot; times are milliseconds since the Unix epoch."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def id(self) -> str:
        """32 lowercase hex characters, minted from workspace, kind, parent and summary."""
    @property
    def workspace(self) -> str:
        """The namespace the node lives in ("" by default)."""
    @property
    def kind(self) -> str:
        """A word of 1-32 characters of ``[a-z0-9_-]`` ("task" by default)."""
    @property
    def summary(self) -> str:
        """What the work is: trimmed, at most 4096 bytes."""
    @property
    def parent(self) -> Optional[str]:
        """The parent's id (hierarchy only, never a dependency), or None."""
    @property
    def deps(self) -> tuple[str, ...]:
        """Hard prerequisites: satisfied when ``done``."""
    @property
    def soft_deps(self) -> tuple[str, ...]:
        """Soft prerequisites: satisfied when finished in any status."""
    @property
    def status(self) -> _Status:
        """The stored status: todo, claimed, done, failed or cancelled."""
    @property
    def generation(self) -> int:
        """The fencing token: 1 at first, one more on every grant and hand-back."""
    @property
    def holder(self) -> Optional[str]:
        """The actor holding the claim, or None."""
    @property
    def holder_name(self) -> Optional[str]:
        """The name the store keeps for the holder, or None."""
    @property
    def completed_by_name(self) -> Optional[str]:
        """The name the store keeps for ``completed_by``, or None."""
    @property
    def last_holder_name(self) -> Optional[str]:
        """The name the store keeps for ``last_holder``, or None."""
    @property
    def attempts(self) -> int:
        """How many times the node was granted."""
    @property
    def max_attempts(self) -> Optional[int]:
        """The node's own cap on attempts, or None (the store's applies)."""
    @property
    def claimed_at(self) -> Optional[int]:
        """When the live claim was granted, or None."""
    @property
    def renewed_at(self) -> Optional[int]:
        """When the live claim was last renewed, or None."""
    @property
    def ttl_ms(self) -> Optional[int]:
        """The lease of the live claim in milliseconds: live while now < renewed_at + ttl_ms."""
    @property
    def role(self) -> str:
        """Only workers asking for this role get the node ("": anyone)."""
    @property
    def priority(self) -> int:
        """Higher first on ties of the critical path."""
    @property
    def estimate(self) -> int:
        """A positive integer (1 by default), summed along critical paths."""
    @property
    def labels(self) -> tuple[str, ...]:
        """Free labels."""
    @property
    def resources(self) -> tuple[str, ...]:
        """What the work touches; live claims never hold overlapping resources."""
    @property
    def ref(self) -> Optional[str]:
        """An external ticket reference, or None."""
    @property
    def note(self) -> Optional[str]:
        """The note the last completion left, or None."""
    @property
    def completed_by(self) -> Optional[str]:
        """The actor that finished the node, or None."""
    @property
    def last_holder(self) -> Optional[str]:
        """The holder whose claim was last handed back (released, expired or reclaimed), or
        None: its renew, release and complete are ``StaleGeneration`` from then on."""
    @property
    def created_at(self) -> int:
        """When the node was created."""
    @property
    def updated_at(self) -> int:
        """When the node last changed."""
    @property
    def archived(self) -> bool:
        """True for a node in the archive."""
    @property
    def not_before(self) -> Optional[int]:
        """Not granted before this time, or None. A todo node ready but for it displays
        ``scheduled``."""
    @property
    def progress(self) -> Optional[str]:
        """The last checkpoint a holder left (``renew(progress=...)``), kept across
        hand-backs; None when none was left (or since a reopen)."""
    @property
    def progress_at(self) -> Optional[int]:
        """When ``progress`` was left, or None."""
    @property
    def cancel_requested(self) -> Optional[CancelRequest]:
        """The request that the holder of this claimed node stop (``cancel``), or None."""
    @property
    def output(self) -> _Json:
        """What the node produced (``complete(output=...)``), as ``json.loads`` gives it;
        None when it gave none."""
    @property
    def children(self) -> Optional[dict[str, int]]:
        """A container's children (kind ``epic``): ``total``, ``done``, ``failed``,
        ``cancelled`` and ``open``; None for any other node."""
    @property
    def deadline(self) -> Optional[int]:
        """Past this time (ms since the epoch) an unfinished node is overdue; None when it
        has none."""
    @property
    def overdue(self) -> bool:
        """True when the node is unfinished and its deadline has passed."""
    @property
    def budget(self) -> Optional[dict[str, Optional[Union[int, str]]]]:
        """The most the node may spend: ``{"tokens": int or None, "cost": str or None}``
        (cost as decimal text); None when it has no budget."""
    @property
    def spent(self) -> dict[str, Union[int, str]]:
        """What the node's claims reported spending, summed: ``{"tokens": int, "cost":
        str}``."""
    @property
    def display(self) -> _DisplayWord:
        """The derived word: ready, scheduled, blocked, todo, claimed, expired, done, failed
        or cancelled."""
    @property
    def ready(self) -> bool:
        """True when the node may be claimed now (``display == "ready"``)."""
    @property
    def why(self) -> Optional[str]:
        """Why a todo node is not ready (or is blocked); None otherwise."""
    def to_dict(self) -> _NodeDict:
        """Every field as a dict.

        Returns:
            The keys of ``claimdag show --json``: the fields, ``display``, ``ready``,
            ``why`` and ``last_holder``, with None for unset ones.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Event:
    """One transition of the history: when, which verb, on which node, by whom, at which
    generation, and a detail (the status reached, the linked node, a cancel's reason)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def seq(self) -> int:
        """The number of the committed write that recorded it."""
    @property
    def i(self) -> int:
        """Its place among the events of that write."""
    @property
    def at(self) -> int:
        """When, in milliseconds since the Unix epoch."""
    @property
    def verb(self) -> _EventVerb:
        """What happened: create, update, link, unlink, claim, renew, release, expire,
        reclaim, complete, cancel, cancel_request, reopen, archive, unarchive or config."""
    @property
    def node(self) -> Optional[str]:
        """The node it happened to, or None (``config``)."""
    @property
    def actor(self) -> Optional[str]:
        """The actor that made it, when one is known, or None."""
    @property
    def actor_name(self) -> Optional[str]:
        """The name the store keeps for ``actor``, or None."""
    @property
    def by_name(self) -> Optional[str]:
        """The name the store keeps for ``by``, or None."""
    @property
    def by(self) -> Optional[str]:
        """Who acted, when that was not ``actor`` (a lead who released or completed a
        worker's claim for it), or None."""
    @property
    def door(self) -> Optional[str]:
        """The front door the call came through (``cli``, ``python``, ``c``, ``mcp``,
        ``http``, ``dashboard``), or None."""
    @property
    def generation(self) -> Optional[int]:
        """The node's generation after the transition, or None."""
    @property
    def detail(self) -> Optional[str]:
        """The status a ``complete`` reached, ``"hard ID"``/``"soft ID"`` for a link, a
        cancel's reason, ...; or None."""
    @property
    def output(self) -> _Json:
        """The output a completion stored, as ``json.loads`` gives it; None for other
        events."""
    def to_dict(self) -> _EventDict:
        """The event as a dict.

        Returns:
            The keys of the CLI's ``log --json``; absent ones are left out.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Pick:
    """A ready node as ``next`` ranks it: its id, its critical path (the largest sum of
    ``estimate`` along a chain of unfinished nodes waiting on it, its own included) and that
    chain, this node first."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def id(self) -> str:
        """The node's id."""
    @property
    def critical(self) -> int:
        """The length of its critical path."""
    @property
    def path(self) -> tuple[str, ...]:
        """The critical path: ids, this node first."""
    @property
    def summary(self) -> str:
        """The node's summary."""
    def to_dict(self) -> _PickDict:
        """The pick as a dict.

        Returns:
            ``{"id", "critical", "path", "summary"}``, as ``claimdag ready --json`` gives it.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Report:
    """What ``Store.check()`` found: counts, and every broken invariant as a sentence."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def ok(self) -> bool:
        """True when no invariant is broken."""
    @property
    def nodes(self) -> int:
        """How many live nodes there are."""
    @property
    def archived(self) -> int:
        """How many archived nodes there are."""
    @property
    def events(self) -> int:
        """How many history events there are."""
    @property
    def problems(self) -> tuple[str, ...]:
        """Every broken invariant, as a sentence."""
    @property
    def notes(self) -> tuple[str, ...]:
        """What is worth knowing but breaks nothing (a journal that could not be compacted)."""
    def to_dict(self) -> _ReportDict:
        """The report as a dict.

        Returns:
            The keys of ``claimdag check --json``.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every field is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some field differs."""

@final
class Settings:
    """The settings of a store (``Store.config``)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def default_ttl_ms(self) -> int:
        """The lease a claim gets when it names no ttl, in milliseconds."""
    @property
    def max_held(self) -> int:
        """Live claims one actor may hold in a workspace; 0 means no limit."""
    @property
    def max_attempts(self) -> Optional[int]:
        """The attempt cap of nodes that set none themselves; None means no cap."""
    @property
    def retry_delay_ms(self) -> int:
        """The first backoff of a handed-back node in milliseconds, doubled with each
        attempt (0: a handed-back node is ready at once)."""
    @property
    def retry_delay_max_ms(self) -> int:
        """The longest backoff, in milliseconds."""
    @property
    def history_keep(self) -> str:
        """How much history stays live: "all", a duration ("7d") or a number of events
        ("1000000"); older history moves to the archive, which ``Store.log(all=True)``
        reads."""
    @property
    def deadline_action(self) -> Literal["none", "cancel"]:
        """"cancel": the holder of a node past its deadline is asked to stop; "none": the
        node is only marked overdue."""
    def to_dict(self) -> _SettingsDict:
        """The settings as a dict.

        Returns:
            The keys of ``claimdag config --json``.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal when every setting is."""
    def __ne__(self, value: object, /) -> bool:
        """Not equal when some setting differs."""

@final
class Store:
    """A claimdag store: one method a verb. Shared safely by threads (each call releases the
    GIL) and by processes that open the same directory. Nothing is created until the first
    write.

    Every method may also raise StoreIOError (the OS refused a read or a write),
    CorruptStore (a file of the store is damaged) and InternalError (a bug); the Raises
    sections leave them out. A refused call changes nothing.
    """

    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]", None] = None,
        workspace: Optional[str] = None,
    ) -> "Store":
        """Opens a store.

        Args:
            path: The store directory (or a ``postgres://`` URL); None:
                ``$CLAIMDAG_DIR``, else ``$XDG_STATE_HOME/claimdag``, else
                ``~/.local/state/claimdag``.
            workspace: The workspace methods use when they are given none; None:
                ``$CLAIMDAG_WORKSPACE``, else "".

        Returns:
            The store.

        Raises:
            InvalidInput: The workspace is not a valid workspace name.
            StoreIOError: The store cannot be opened.
            CorruptStore: A file of the store is damaged.
        """
    @property
    def path(self) -> str:
        """Where the store is: its directory (or its database, never with a password)."""
    @property
    def workspace(self) -> str:
        """The workspace methods use when they are given none."""
    def acting_as(self, actor: str) -> "Store":
        """The same store, where ``actor`` does every write.

        The history records it (``Event.by``) beside the actor of each event it makes for
        another: a lead releasing or completing a worker's claim. The rules stay the named
        actor's (a release still names the holder and its generation).

        Args:
            actor: 32 hex characters, or ``name:NAME``.

        Returns:
            A Store on the same store and workspace.
        """
    def __reduce__(self) -> tuple[type["Store"], tuple[str, str]]:
        """Pickles as its path and workspace, so a Store can be handed to another process."""
    def upsert(
        self,
        summary: str,
        kind: str = "task",
        parent: Optional[str] = None,
        role: Optional[str] = None,
        priority: Optional[int] = None,
        estimate: Optional[int] = None,
        labels: Optional[Sequence[str]] = None,
        resources: Optional[Sequence[str]] = None,
        ref: Optional[str] = None,
        max_attempts: Optional[int] = None,
        workspace: Optional[str] = None,
        not_before: Optional[_When] = None,
        deadline: Optional[_When] = None,
        budget: Optional[Union[str, dict[str, Union[int, float, str]]]] = None,
    ) -> str:
        """Creates a node, or merges fields into the node with the same identity (workspace,
        kind, parent, summary). A field left at None keeps its value on an existing node
        and its default on a new one; a finished or archived node is left as it is.

        Args:
            summary: What the work is (trimmed; non-empty, at most 4096 bytes).
            kind: 1-32 characters of ``[a-z0-9_-]``; part of the identity.
            parent: The parent node (hierarchy only); part of the identity.
            role: Only workers asking for this role get the node ("": anyone).
            priority: Higher first on ties (a signed 64-bit number).
            estimate: A positive integer, summed along critical paths.
            labels: Free labels (one line each, at most 256 bytes).
            resources: What the work touches; live claims never overlap.
            ref: An external ticket reference.
            max_attempts: The node's cap on attempts (at least 1).
            workspace: The workspace (default: the store's).
            not_before: Not granted before this time: an aware datetime, or a str (RFC 3339,
                or ``"+90s"`` from now); until then the node displays ``scheduled``.
            deadline: Past this time (as ``not_before``) an unfinished node is overdue.
            budget: The most the node may spend: ``"tokens=N,cost=X"`` or a dict of them;
                past it the holder is asked to stop.

        Returns:
            The node's id (32 hex characters): the same for the same identity.

        Raises:
            InvalidInput: A field is malformed (a naive datetime for ``not_before`` too).
            NotFound: ``parent`` does not exist.
            ResourceConflict: New resources of a claimed node overlap another live claim.
            TypeError: An argument has the wrong type.
        """
    def link(self, parent: str, child: str, soft: bool = False) -> None:
        """Makes ``child`` wait on ``parent``. Linking twice is a no-op; linking again with
        the other ``soft`` turns the link into that kind.

        Args:
            parent: The prerequisite.
            child: The node that waits.
            soft: False: a hard link, satisfied when ``parent`` is done. True: a soft link,
                satisfied when ``parent`` finished in any status.

        Raises:
            NotFound: A node does not exist.
            Cycle: The link would close a cycle (or links a node to itself).
            Terminal: ``child`` is finished.
            AlreadyClaimed: ``child`` is claimed.
            InvalidInput: The nodes are in different workspaces, or a node is malformed.
        """
    def unlink(self, parent: str, child: str) -> None:
        """Removes the link that makes ``child`` wait on ``parent`` (a no-op when there is
        none).

        Args:
            parent: The prerequisite.
            child: The node that waits.

        Raises:
            NotFound: A node does not exist.
            InvalidInput: A node is malformed.
        """
    @overload
    def claim(
        self,
        node: str,
        assignee: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        details: Literal[False] = False,
    ) -> int:
        """Claims a ready node for ``assignee``.

        Args:
            node: The node.
            assignee: The claiming actor.
            gen: Claim only if the node is at this generation.
            ttl: The lease (default: the store's ``default_ttl``).
            details: True: return the whole Grant instead of the generation.

        Returns:
            The new generation: the fencing token to renew, release and complete with (with
            ``details=True``, the Grant: the generation, the last checkpoint an earlier
            holder left and the outputs of the prerequisites).

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            Terminal: The node is finished.
            AlreadyClaimed: The node is claimed (by anyone, ``assignee`` included).
            NotReady: The node waits on prerequisites (or is blocked, or scheduled).
            AttemptsExhausted: The node used up its attempts.
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            ResourceConflict: A live claim holds an overlapping resource.
            InvalidInput: An argument is malformed.
        """
    @overload
    def claim(
        self,
        node: str,
        assignee: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        *,
        details: Literal[True],
    ) -> Grant:
        """With ``details=True``: the whole Grant."""
    @overload
    def claim(
        self,
        node: str,
        assignee: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        details: bool = False,
    ) -> Union[int, Grant]:
        """With ``details`` not known statically: the generation or the Grant."""
    def renew(
        self,
        node: str,
        actor: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        progress: Optional[str] = None,
        usage: Optional[Union[str, dict[str, Union[int, float, str]]]] = None,
    ) -> Optional[CancelRequest]:
        """Keeps ``actor``'s live claim alive: its lease starts again now.

        Args:
            node: The node.
            actor: The holder.
            gen: Renew only at this generation (the one the claim was granted).
            ttl: A new lease (default: the claim's).
            progress: A checkpoint to leave (at most 64 KiB), replacing the last one; the
                next holder receives it if this one stops.
            usage: What this claim has spent so far, its total: ``"tokens=N,cost=X"`` or a
                dict (a field left out keeps the last one reported).

        Returns:
            The CancelRequest when someone asked the holder to stop (``cancel``, a deadline
            passed with ``deadline_action cancel``, the budget spent), else None.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation, or the claim of
                ``actor`` was handed back.
            NotClaimed: The node is not claimed.
            Terminal: The node is finished.
            NotHolder: ``actor`` is not the holder.
            InvalidInput: An argument is malformed.
        """
    def release(
        self, node: str, actor: str, gen: int, retry_in: Optional[_Duration] = None
    ) -> int:
        """Hands ``actor``'s claim back for another attempt.

        Args:
            node: The node.
            actor: The holder.
            gen: The generation the claim was granted.
            retry_in: Not granted again for that long (it displays ``scheduled``), in place
                of the store's ``retry_delay`` backoff.

        Returns:
            The node's new generation.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            NotClaimed: The node is not claimed.
            Terminal: The node is finished.
            NotHolder: ``actor`` is not the holder.
            InvalidInput: An argument is malformed.
        """
    def reclaim(
        self, lease: Optional[_Duration] = None, workspace: Optional[str] = None
    ) -> builtins.list[tuple[str, int]]:
        """Hands back expired claims, and with ``lease`` also claims quiet for that long.

        Args:
            lease: Also hand back claims not renewed for that long (0: every claim).
            workspace: The workspace (default: the store's).

        Returns:
            ``[(id, new_generation), ...]`` for every claim handed back.

        Raises:
            InvalidInput: An argument is malformed.
        """
    def complete(
        self,
        node: str,
        gen: int,
        status: _Finished = "done",
        actor: Optional[str] = None,
        note: Optional[str] = None,
        output: _Json = None,
    ) -> None:
        """Finishes the live claim at ``gen`` (a todo node may be cancelled at its current
        generation).

        Args:
            node: The node.
            gen: The generation the claim was granted.
            status: "done", "failed" or "cancelled".
            actor: Only if this actor is the holder.
            note: A note to leave on the node (at most 64 KiB).
            output: What the node produced: any value ``json.dumps`` takes (at most 64 KiB
                as JSON); its dependents receive it as an input when they are claimed.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            Terminal: The node is finished already.
            NotClaimed: The node is todo, and ``status`` is not "cancelled".
            NotHolder: ``actor`` is not the holder.
            InvalidInput: A bad status, an output too large, or a malformed argument.
            TypeError: ``output`` is not a JSON value.
        """
    def complete_many(
        self, completions: Union[Sequence[_Completion], str, bytes, bytearray]
    ) -> builtins.list[tuple[str, _Finished]]:
        """Finishes several claims in one write: all of them, or none when one is refused.

        Args:
            completions: A list (or tuple) of completions, each a dict of ``complete``'s
                arguments (``node``, ``gen``, and optionally ``status`` (default "done"),
                ``actor``, ``note``, ``output``) or a tuple ``(node, gen)``, ``(node, gen,
                status)`` or ``(node, gen, status, output)``; or the JSON text of a list of
                such dicts.

        Returns:
            ``[(id, status), ...]`` in request order.

        Raises:
            ClaimdagError: The refused completion's error, as ``complete`` raises it.
            InvalidInput: No completion, an unknown key, nodes of several workspaces.
            TypeError: ``completions`` or one of them has the wrong type.
        """
    def cancel(
        self,
        node: str,
        reason: Optional[str] = None,
        actor: Optional[str] = None,
        gen: Optional[int] = None,
    ) -> bool:
        """Cancels a node, by anyone: a todo node becomes ``cancelled`` at once; the holder
        of a claimed node is asked to stop, learns it at its next renewal, then completes
        the node ``cancelled`` (or finishes it).

        Args:
            node: The node.
            reason: Why, in words the holder acts on (at most 4096 bytes).
            actor: Who asks.
            gen: Only if the node is at this generation.

        Returns:
            False when a todo node was cancelled, True when the holder was asked to stop.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            Terminal: The node is finished.
            InvalidInput: An argument is malformed.
        """
    def approve(
        self, node: str, gen: int, note: Optional[str] = None, actor: Optional[str] = None
    ) -> str:
        """Approves a gate (a node of kind ``gate``) at its generation: it is done, and the
        nodes waiting on it go on.

        Args:
            node: The gate.
            gen: Its generation, as shown: a gate reopened since is refused.
            note: Why, kept as the gate's note.
            actor: Who decides.

        Returns:
            ``"done"``.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the gate's generation.
            Terminal: The gate was decided already.
            NotReady: A prerequisite of the gate is still open.
            InvalidInput: The node is not a gate, or an argument is malformed.
        """
    def reject(
        self, node: str, gen: int, note: Optional[str] = None, actor: Optional[str] = None
    ) -> str:
        """Rejects a gate at its generation: it failed, and the nodes waiting on it are
        blocked.

        Args:
            node: The gate.
            gen: Its generation, as shown.
            note: Why, kept as the gate's note.
            actor: Who decides.

        Returns:
            ``"failed"``.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the gate's generation.
            Terminal: The gate was decided already.
            NotReady: A prerequisite of the gate is still open.
            InvalidInput: The node is not a gate, or an argument is malformed.
        """
    def retry(self, node: str, gen: int) -> int:
        """Gives a parked node (display ``parked``: out of attempts) fresh attempts; its
        generation moves on.

        Args:
            node: The parked node.
            gen: Its generation, as shown.

        Returns:
            The new generation.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            InvalidInput: The node is not parked, or an argument is malformed.
        """
    def finished(self, role: Optional[str] = None, workspace: Optional[str] = None) -> bool:
        """Whether the work is done for ``role``: nothing is ready, and nothing pending
        (a claim, a scheduled node, a gate, an epic with open children) can make a node
        ready. A worker that finds nothing ready stops when this is True and waits (or
        calls ``claim_next`` with ``wait``) when it is False.

        Args:
            role: Work of this role (None: nodes of no role).
            workspace: The workspace (default: the store's).

        Returns:
            True when a worker may stop.
        """
    def reopen(self, node: str, gen: Optional[int] = None) -> int:
        """Puts a finished node back to todo, without its checkpoint, cancel request or
        output.

        Args:
            node: The node.
            gen: Only if the node is at this generation.

        Returns:
            The new generation.

        Raises:
            NotFound: The node does not exist.
            StaleGeneration: ``gen`` is not the node's generation.
            InvalidInput: The node is not finished, or an argument is malformed.
        """
    def get(self, node: str) -> Node:
        """One node, live or archived.

        Args:
            node: The node.

        Returns:
            The Node, with its display word and readiness.

        Raises:
            NotFound: The node does not exist.
            InvalidInput: ``node`` is malformed or an ambiguous prefix.
        """
    def list(
        self,
        status: Optional[_ListStatus] = None,
        ready: Optional[bool] = None,
        holder: Optional[str] = None,
        archived: bool = False,
        terminal: bool = False,
        workspace: Optional[str] = None,
    ) -> builtins.list[Node]:
        """The nodes of a workspace, in creation order.

        Args:
            status: Only those whose stored status or display word it is (default: the
                unfinished ones).
            ready: True: only ready nodes; False: only nodes not ready.
            holder: Only the claims of this actor.
            archived: List archived nodes instead of live ones.
            terminal: Add finished nodes.
            workspace: The workspace (default: the store's).

        Returns:
            The matching nodes.

        Raises:
            InvalidInput: An unknown status word, or a malformed argument.
        """
    def next(
        self, role: Optional[str] = None, workspace: Optional[str] = None
    ) -> Optional[str]:
        """The ready node to work on next (longest critical path, then priority, exact role,
        age).

        Args:
            role: Consider nodes of this role or of none.
            workspace: The workspace (default: the store's).

        Returns:
            Its id, or None when nothing is ready.

        Raises:
            InvalidInput: An argument is malformed.
        """
    def ready(
        self, role: Optional[str] = None, workspace: Optional[str] = None
    ) -> builtins.list[Pick]:
        """The ready nodes in the order ``next`` would pick them.

        Args:
            role: Consider nodes of this role or of none.
            workspace: The workspace (default: the store's).

        Returns:
            A Pick for each, with its critical path.

        Raises:
            InvalidInput: An argument is malformed.
        """
    @overload
    def claim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        details: Literal[False] = False,
    ) -> Optional[tuple[str, int]]:
        """Picks the next ready node and claims it for ``assignee`` in one locked step.

        Args:
            assignee: The claiming actor.
            role: Consider nodes of this role or of none.
            ttl: The lease (default: the store's ``default_ttl``).
            workspace: The workspace (default: the store's).
            resume: When ``assignee`` already holds a live claim, answer that claim.
            wait: When nothing is ready, wait up to that long for a node to become ready (a
                write of any process, a claim running out, a ``not_before`` passing). The
                GIL is released while waiting, and Ctrl-C interrupts it.
            details: True: return the whole Grant instead of ``(id, generation)``.

        Returns:
            ``(id, generation)`` (the Grant with ``details=True``), or None when nothing is
            ready (by the end of ``wait``).

        Raises:
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: An argument is malformed.
        """
    @overload
    def claim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        *,
        details: Literal[True],
    ) -> Optional[Grant]:
        """With ``details=True``: the whole Grant, or None."""
    @overload
    def claim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        details: bool = False,
    ) -> Union[tuple[str, int], Grant, None]:
        """With ``details`` not known statically: ``(id, generation)``, the Grant, or None."""
    def claim_next_many(
        self,
        assignee: str,
        count: int,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        wait: Optional[_Duration] = None,
    ) -> builtins.list[Grant]:
        """Claims up to ``count`` ready nodes for ``assignee`` in one write, in pick order,
        under the rules of one claim at a time (``max_held`` counts each; a node whose
        resources overlap a live claim is passed over).

        Args:
            assignee: The claiming actor.
            count: How many at most: 1 to 1000.
            role: Consider nodes of this role or of none.
            ttl: The lease of each (default: the store's ``default_ttl``).
            workspace: The workspace (default: the store's).
            wait: As ``claim_next``'s.

        Returns:
            Their Grants, each with its own generation; ``[]`` when nothing is ready.

        Raises:
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: ``count`` out of 1 to 1000, or a malformed argument.
            TypeError: ``count`` is not an int (a bool is not).
        """
    def watch(
        self, since: Optional[int] = None, timeout: Optional[_Duration] = None
    ) -> "Watch":
        """Follows the history as it is written, by any process.

        Args:
            since: Replay the events after that event number first (default: only what is
                written from now on).
            timeout: End when nothing is written for that long (default: never).

        Returns:
            An iterator of Events (as ``log`` gives them) that blocks, with the GIL
            released, until the next write is committed.

        Raises:
            InvalidInput: ``timeout`` is malformed, or ``since`` negative or too large.
            TypeError: ``since`` is not an int (a bool is not).
        """
    def log(
        self, node: Optional[str] = None, since: Optional[int] = None, all: bool = False
    ) -> builtins.list[Event]:
        """The history, oldest first.

        Args:
            node: Only this node's transitions.
            since: Only the events after this event number.
            all: The archived history (``history_keep``) too.

        Returns:
            The Events.

        Raises:
            NotFound: ``node`` does not exist.
            InvalidInput: ``node`` is malformed, or ``since`` negative or too large.
            TypeError: ``since`` is not an int (a bool is not).
        """
    def config(
        self,
        *,
        default_ttl: _Duration = ...,
        max_held: Optional[int] = None,
        max_attempts: Optional[int] = ...,
        retry_delay: Optional[_Duration] = None,
        retry_delay_max: Optional[_Duration] = None,
        history_keep: Optional[Union[str, int]] = None,
        deadline_action: Optional[Literal["none", "cancel"]] = None,
    ) -> Settings:
        """Reads the settings, after changing those given. The changes are one locked write
        of those settings alone, so concurrent changes of other settings are kept.

        Args:
            default_ttl: The lease of a claim that names none.
            max_held: Live claims one actor may hold in a workspace (0: no limit).
            max_attempts: The attempt cap of nodes that set none (None: no cap).
            retry_delay: The first backoff of a handed-back node, doubled with each attempt
                (0: none).
            retry_delay_max: The longest backoff.
            history_keep: How much history stays live: "all", a duration such as "7d",
                or a number of events.
            deadline_action: "cancel": ask the holder of a node past its deadline to stop;
                "none": only mark it overdue.

        Returns:
            The Settings after the change.

        Raises:
            InvalidInput: A value is out of range, or ``retry_delay`` exceeds
                ``retry_delay_max``.
            TypeError: An argument has the wrong type.
        """
    def archive(
        self,
        *nodes: str,
        older_than: Optional[_Duration] = None,
        workspace: Optional[str] = None,
    ) -> int:
        """Moves finished nodes out of the live state; with neither ``nodes`` nor
        ``older_than``, every finished node of the workspace.

        Args:
            *nodes: Finished nodes to archive.
            older_than: Also every node of the workspace finished at least that long ago.
            workspace: The workspace (default: the store's).

        Returns:
            How many nodes moved.

        Raises:
            NotFound: A node does not exist.
            InvalidInput: A named node is not finished, the nodes are in several
                workspaces, or an argument is malformed.
        """
    def unarchive(self, node: str) -> _Finished:
        """Brings an archived node back into the live state, unchanged.

        Args:
            node: The archived node.

        Returns:
            Its status.

        Raises:
            NotFound: The node does not exist.
            InvalidInput: The node is not archived, or ``node`` is malformed.
            Cycle: A node it waits on has come to wait on it meanwhile.
        """
    def import_plan(
        self,
        plan: Union[_Plan, str, bytes, bytearray],
        workspace: Optional[str] = None,
    ) -> builtins.list[tuple[str, str]]:
        """Creates or merges every node of ``plan`` with its links as one atomic write, like
        ``claimdag import``. Importing the same plan again returns the same ids and writes
        nothing.

        Args:
            plan: A dict ``{"nodes": [...]}`` or its JSON text (str or bytes).
            workspace: The workspace (default: the store's).

        Returns:
            ``[(id, key), ...]`` in plan order.

        Raises:
            InvalidInput: An unknown field or a malformed value (the message names the plan
                key).
            NotFound: A reference names no plan key nor node.
            Cycle: The links close a cycle.
            TypeError: A value JSON cannot hold (a set, a non-str key).
        """
    def graph(
        self,
        format: _GraphFormat = "dot",
        all: bool = False,
        workspace: Optional[str] = None,
    ) -> str:
        """The workspace's DAG as text, as ``claimdag graph`` prints it.

        Args:
            format: "dot" (Graphviz), "mermaid", or "json" (a JSON document of the
                nodes and links, each marked when on the critical path).
            all: Draw finished nodes too.
            workspace: The workspace (default: the store's).

        Returns:
            The drawing.

        Raises:
            InvalidInput: An unknown format, or a malformed workspace.
        """
    def check(self) -> Report:
        """Reads every file of the store afresh and verifies the DAG's invariants.

        Returns:
            The Report; broken invariants are listed in its ``problems``.

        Raises:
            CorruptStore: A file is damaged.
        """
    def call(self, verb: _Verb, args: Optional[dict[str, Any]] = None, **kwargs: Any) -> Any:
        """Runs any verb by name, with its arguments named as the CLI's long options with
        ``_`` for ``-``: ``store.call("reclaim", lease=0)``.

        Args:
            verb: The verb.
            args: Its arguments as a dict.
            **kwargs: Its arguments as keywords (they win over ``args``).

        Returns:
            Its reply exactly as the CLI's ``--json`` prints it, as ``json.loads`` gives it:
            a dict, a list, or None when ``next``/``claim_next`` found nothing.

        Raises:
            ClaimdagError: The verb's refusal, as the method of the same name raises it.
            InvalidInput: An unknown verb or argument.
        """
    def lease_next(
        self,
        assignee: str,
        ttl: Optional[_Duration] = None,
        role: Optional[str] = None,
        workspace: Optional[str] = None,
        on_error: _OnError = "failed",
        on_lost: Optional[Callable[["ClaimdagErrorLike"], object]] = None,
        wait: Optional[_Duration] = None,
        on_cancel: Optional[Callable[[CancelRequest], object]] = None,
    ) -> "LeaseNext":
        """Claims the next ready node and holds it as a Lease that renews itself (about
        every third of ``ttl``): ``with store.lease_next(me, ttl=60) as lease:``. Leaving
        the block completes the node "done"; an exception completes it "failed" (or
        releases it, with ``on_error="release"``).

        Args:
            assignee: The claiming actor.
            ttl: The lease (default: the store's ``default_ttl``).
            role: Consider nodes of this role or of none.
            workspace: The workspace (default: the store's).
            on_error: "failed" or "release": what an exception in the block does.
            on_lost: Called with the refusal (on the renewal thread) when the store refuses
                a renew: the node is someone else's now.
            wait: As ``claim_next``'s.
            on_cancel: Called with the CancelRequest (on the renewal thread) when a renewal
                learns that someone asked the holder to stop.

        Returns:
            A LeaseNext, which enters as the Lease, or None when nothing is ready.

        Raises:
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: An unknown ``on_error``, or a malformed argument.
        """
    @overload
    def aclaim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        details: Literal[False] = False,
    ) -> Coroutine[Any, Any, Optional[tuple[str, int]]]:
        """``claim_next`` for asyncio: ``await store.aclaim_next(me, wait=60)``. The claim
        runs briefly in a worker thread; with ``wait``, the waiting holds no thread of its
        own (one thread per store follows its writes for every waiting task).

        Args:
            assignee: The claiming actor.
            role: Consider nodes of this role or of none.
            ttl: The lease (default: the store's ``default_ttl``).
            workspace: The workspace (default: the store's).
            resume: When ``assignee`` already holds a live claim, answer that claim.
            wait: When nothing is ready, wait up to that long for a node to become ready.
            details: True: return the whole Grant instead of ``(id, generation)``.

        Returns:
            A coroutine giving ``(id, generation)`` (the Grant with ``details=True``), or
            None when nothing is ready (by the end of ``wait``).

        Raises:
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: An argument is malformed.
        """
    @overload
    def aclaim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        *,
        details: Literal[True],
    ) -> Coroutine[Any, Any, Optional[Grant]]:
        """With ``details=True``: the whole Grant, or None."""
    @overload
    def aclaim_next(
        self,
        assignee: str,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        resume: bool = False,
        wait: Optional[_Duration] = None,
        details: bool = False,
    ) -> Coroutine[Any, Any, Union[tuple[str, int], Grant, None]]:
        """With ``details`` not known statically: ``(id, generation)``, the Grant, or None."""
    def aclaim_next_many(
        self,
        assignee: str,
        count: int,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        wait: Optional[_Duration] = None,
    ) -> Coroutine[Any, Any, builtins.list[Grant]]:
        """``claim_next_many`` for asyncio: ``await store.aclaim_next_many(me, 10, wait=60)``,
        waiting as ``aclaim_next`` does.

        Args:
            assignee: The claiming actor.
            count: How many at most: 1 to 1000.
            role: Consider nodes of this role or of none.
            ttl: The lease of each (default: the store's ``default_ttl``).
            workspace: The workspace (default: the store's).
            wait: When nothing is ready, wait up to that long for work.

        Returns:
            A coroutine giving the Grants; ``[]`` when nothing is ready.

        Raises:
            AssigneeBusy: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: ``count`` out of 1 to 1000, or a malformed argument.
        """
    def alease_next(
        self,
        assignee: str,
        ttl: Optional[_Duration] = None,
        role: Optional[str] = None,
        workspace: Optional[str] = None,
        on_error: _OnError = "failed",
        on_lost: Optional[Callable[["ClaimdagErrorLike"], object]] = None,
        wait: Optional[_Duration] = None,
        on_cancel: Optional[Callable[[CancelRequest], object]] = None,
    ) -> "AsyncLeaseNext":
        """``lease_next`` for asyncio: ``async with store.alease_next(me, ttl=60) as lease:``,
        with awaitable ``lease.complete()`` and ``lease.release()``. Nothing blocks the
        event loop: the claim and the finish run in a worker thread, the renewal on its own.

        Args:
            assignee: The claiming actor.
            ttl: The lease (default: the store's ``default_ttl``).
            role: Consider nodes of this role or of none.
            workspace: The workspace (default: the store's).
            on_error: "failed" or "release": what an exception in the block does.
            on_lost: Called with the refusal (on the renewal thread) when a renew is refused.
            wait: When nothing is ready, wait up to that long without holding a thread.
            on_cancel: Called with the CancelRequest (on the renewal thread) when the holder
                is asked to stop.

        Returns:
            An AsyncLeaseNext: entering it (``async with``) claims, and gives the
            AsyncLease or None when nothing is ready. The arguments are checked then.

        Raises:
            AssigneeBusy: On entering: ``assignee`` already holds ``max_held`` live claims.
            InvalidInput: On entering: an unknown ``on_error``, or a malformed argument.
        """
    # For claimdag.aio: the store's version, a bounded wait for a write after a version,
    # a wait argument in milliseconds, the seconds until a change by time alone.
    def _version(self) -> int: ...
    def _wait_change(self, seen: int, timeout: _Duration) -> int: ...
    def _wait_ms(self, wait: _Duration) -> int: ...
    def _next_change_in(self) -> Optional[float]: ...

@final
class Lease:
    """A live claim held for you (``Store.lease_next``): renewed about every third of its
    ttl with the generation it was granted, and finished with that generation.

    ``lost`` turns true (and ``on_lost`` is called) once the store refuses a renew or none
    succeeded for a whole ttl, or finishing is refused because the claim is gone: the node
    is someone else's now, and the work done under the lease must be dropped.
    """

    @property
    def id(self) -> str:
        """The node's id."""
    @property
    def generation(self) -> int:
        """The generation the claim was granted: the fencing token the lease finishes with."""
    @property
    def actor(self) -> str:
        """The holder (32 hex characters)."""
    @property
    def node(self) -> Node:
        """The node as it was when it was claimed."""
    @property
    def lost(self) -> bool:
        """True once the lease was lost: drop the work done under it."""
    @property
    def finished(self) -> bool:
        """True once the lease was completed or released."""
    @property
    def grant(self) -> Grant:
        """What the claim handed over: the last checkpoint an earlier holder left and the
        outputs of the prerequisites."""
    @property
    def inputs(self) -> dict[str, _Json]:
        """``{prerequisite id: its output}`` for every prerequisite that was done when the
        claim was granted (None for one that gave no output)."""
    @property
    def cancel_requested(self) -> Optional[CancelRequest]:
        """The request that this holder stop, once a renewal learned of one (None before):
        stop, and complete the node "cancelled" (or finish it)."""
    @overload
    def progress(self, text: str, now: Literal[False] = False) -> None:
        """Leaves a checkpoint (at most 64 KiB): the next holder receives it if this one
        stops. A larger one, or one with a NUL, is refused at once and not queued: the
        renewals go on with the last checkpoint that fitted.

        Args:
            text: The checkpoint.
            now: False: send it with the next renewal (a later one replaces it if none was
                sent meanwhile). True: renew with it at once.

        Returns:
            None; with ``now=True``, the CancelRequest made of the holder, or None.

        Raises:
            InvalidInput: The lease was completed or released already, or the checkpoint is
                over 64 KiB or holds a NUL (nothing changes; the lease lives on).
            StaleGeneration: With ``now=True``: the renewal was refused (also NotHolder,
                NotClaimed, Terminal); the lease is lost.
        """
    @overload
    def progress(self, text: str, now: bool) -> Optional[CancelRequest]:
        """With ``now=True``: renews at once; the CancelRequest made of the holder, or None."""
    def usage(
        self, spent: Union[str, dict[str, Union[int, float, str]]], now: bool = False
    ) -> Optional[CancelRequest]:
        """Reports what this claim has spent so far (its total; a field left out keeps the
        last one reported), sent with the next renewal.

        Args:
            spent: ``"tokens=N,cost=X"`` or a dict of them.
            now: True: renew with it at once.

        Returns:
            None; with ``now=True``, the CancelRequest made of the holder (past the node's
            budget), or None.

        Raises:
            InvalidInput: The lease was completed or released, or ``spent`` is malformed.
        """
    def on_cancel(self, callback: Callable[[CancelRequest], object]) -> None:
        """Calls ``callback(request)`` (on the renewal thread) when a renewal learns that
        someone asked the holder to stop; at once if one already did. An exception it raises
        is reported as unraisable.

        Args:
            callback: Called with the CancelRequest.
        """
    def complete(
        self, status: _Finished = "done", note: Optional[str] = None, output: _Json = None
    ) -> None:
        """Finishes the node at the granted generation. A completion refused while the claim
        is still held (an output too large) leaves the lease held and renewing: complete it
        again.

        Args:
            status: "done", "failed" or "cancelled".
            note: A note to leave on the node.
            output: What it produced: any value ``json.dumps`` takes (at most 64 KiB as
                JSON), handed to its dependents as an input.

        Raises:
            StaleGeneration: The lease was lost; nothing changes.
            InvalidInput: A bad status, an output too large, or the lease was completed or
                released already.
            TypeError: ``output`` is not a JSON value.
        """
    def release(self, retry_in: Optional[_Duration] = None) -> None:
        """Hands the claim back at the granted generation, for another attempt.

        Args:
            retry_in: Not granted again for that long (the node displays ``scheduled``), in
                place of the store's ``retry_delay`` backoff.

        Raises:
            StaleGeneration: The lease was lost.
            InvalidInput: The lease was completed or released already, or ``retry_in`` is
                malformed.
        """
    def __enter__(self) -> "Lease":
        """The lease itself."""
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]] = None,
        _exc: Optional[BaseException] = None,
        _tb: Optional[TracebackType] = None,
    ) -> bool:
        """Leaving the block: "done" on a clean exit, else "failed" or released
        (``on_error``); nothing for a lease finished already or lost.

        Returns:
            False: the block's exception, if any, propagates.

        Raises:
            ClaimdagError: Finishing was refused on a clean exit.
        """

@final
class LeaseNext:
    """What ``Store.lease_next`` returns: ``with store.lease_next(...) as lease:`` enters as
    the Lease, or None when nothing was ready (leaving the block then does nothing)."""

    @property
    def lease(self) -> Optional[Lease]:
        """The lease, or None when nothing was ready."""
    @property
    def finished(self) -> bool:
        """True when no lease was taken and nothing can become ready (``Store.finished``):
        the work is done, stop; False with a lease, or when work may still come: wait."""
    def __enter__(self) -> Optional[Lease]:
        """The lease, or None."""
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        tb: Optional[TracebackType] = None,
    ) -> bool:
        """Leaves the lease's block (``Lease.__exit__``).

        Returns:
            False: the block's exception, if any, propagates.

        Raises:
            ClaimdagError: Finishing was refused on a clean exit.
        """

@final
class Watch:
    """The store's events as they are committed (``Store.watch``): each ``next()`` blocks,
    with the GIL released, until there is an event after the last one given. With a
    ``timeout``, iteration ends when nothing is written for that long."""

    def __iter__(self) -> "Watch":
        """The iterator itself."""
    def __next__(self) -> Event:
        """The next event.

        Returns:
            The Event.

        Raises:
            StopIteration: Nothing was written for ``timeout``.
            KeyboardInterrupt: Ctrl-C while waiting.
        """

def actor(name: str) -> str:
    """The actor ``name:NAME`` stands for.

    Args:
        name: ``NAME`` or ``name:NAME``: 1-64 characters of ``[A-Za-z0-9._@-]``.

    Returns:
        The actor, as 32 hex characters (docs/reference.md, "The actor recipe").

    Raises:
        InvalidInput: The name is malformed.
    """
