"""Type stubs of the native module claimdag._claimdag (checked with mypy.stubtest)."""

import builtins
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, final, overload

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
    "Grant",
    "CancelRequest",
    "Lease",
    "LeaseNext",
    "Watch",
    "run_cli",
    "actor",
]

__version__: str

#: The core's table of error codes, in numeric order: (variant name, code, C value, exit
#: status, meaning). claimdag.exceptions builds its classes from it.
CODES: tuple[tuple[str, str, int, int, str], ...]

#: A duration: seconds (int or float) or a timedelta.
_Duration = Union[float, timedelta]

#: A point in time: an aware datetime, or a str (RFC 3339, or "+DUR" from now: "+90s").
_When = Union[datetime, str]

#: The derived display words of a node.
_DisplayWord = Literal[
    "ready", "scheduled", "blocked", "todo", "claimed", "expired", "done", "failed", "cancelled"
]

#: The statuses a completion reaches.
_Finished = Literal["done", "failed", "cancelled"]

#: A JSON value: what json.loads gives (an output, an input).
_Json = Any

#: One completion of Store.complete_many: a dict with the arguments of Store.complete
#: ("node", "gen", and optionally "status", "actor", "note", "output"), or a tuple
#: (node, gen), (node, gen, status) or (node, gen, status, output).
_Completion = Union[
    Mapping[str, Any],
    tuple[str, int],
    tuple[str, int, str],
    tuple[str, int, str, Any],
]

@final
class CancelRequest:
    """A request that the holder of a claim stop: who asked, why, and when (ms)."""

    @property
    def by(self) -> Optional[str]: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def at(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Grant:
    """A claim granted: the generation, the last checkpoint an earlier holder left, and
    the outputs of the prerequisites that are done (inputs, by id)."""

    @property
    def id(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def resumed(self) -> bool: ...
    @property
    def progress(self) -> Optional[str]: ...
    @property
    def progress_at(self) -> Optional[int]: ...
    @property
    def inputs(self) -> dict[str, _Json]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Node:
    """One node: every field of the store, plus the derived display word and readiness.
    Times are milliseconds since the Unix epoch."""

    @property
    def id(self) -> str: ...
    @property
    def workspace(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def parent(self) -> Optional[str]: ...
    @property
    def deps(self) -> tuple[str, ...]: ...
    @property
    def soft_deps(self) -> tuple[str, ...]: ...
    @property
    def status(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def holder(self) -> Optional[str]: ...
    @property
    def attempts(self) -> int: ...
    @property
    def max_attempts(self) -> Optional[int]: ...
    @property
    def claimed_at(self) -> Optional[int]: ...
    @property
    def renewed_at(self) -> Optional[int]: ...
    @property
    def ttl_ms(self) -> Optional[int]: ...
    @property
    def role(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def estimate(self) -> int: ...
    @property
    def labels(self) -> tuple[str, ...]: ...
    @property
    def resources(self) -> tuple[str, ...]: ...
    @property
    def ref(self) -> Optional[str]: ...
    @property
    def note(self) -> Optional[str]: ...
    @property
    def completed_by(self) -> Optional[str]: ...
    @property
    def created_at(self) -> int: ...
    @property
    def updated_at(self) -> int: ...
    @property
    def archived(self) -> bool: ...
    @property
    def not_before(self) -> Optional[int]: ...
    @property
    def progress(self) -> Optional[str]: ...
    @property
    def progress_at(self) -> Optional[int]: ...
    @property
    def cancel_requested(self) -> Optional[CancelRequest]: ...
    @property
    def output(self) -> _Json: ...
    @property
    def display(self) -> _DisplayWord: ...
    @property
    def ready(self) -> bool: ...
    @property
    def why(self) -> Optional[str]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Event:
    """One transition of the history."""

    @property
    def seq(self) -> int: ...
    @property
    def i(self) -> int: ...
    @property
    def at(self) -> int: ...
    @property
    def verb(self) -> str: ...
    @property
    def node(self) -> Optional[str]: ...
    @property
    def actor(self) -> Optional[str]: ...
    @property
    def generation(self) -> Optional[int]: ...
    @property
    def detail(self) -> Optional[str]: ...
    @property
    def output(self) -> _Json: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Pick:
    """A ready node as `next` ranks it, with its critical path."""

    @property
    def id(self) -> str: ...
    @property
    def critical(self) -> int: ...
    @property
    def path(self) -> tuple[str, ...]: ...
    @property
    def summary(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Report:
    """What Store.check() found."""

    @property
    def ok(self) -> bool: ...
    @property
    def nodes(self) -> int: ...
    @property
    def archived(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def problems(self) -> tuple[str, ...]: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Settings:
    """The settings of a store."""

    @property
    def default_ttl_ms(self) -> int: ...
    @property
    def max_held(self) -> int: ...
    @property
    def max_attempts(self) -> Optional[int]: ...
    @property
    def retry_delay_ms(self) -> int: ...
    @property
    def retry_delay_max_ms(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Store:
    """A claimdag store directory, shared safely by threads and processes."""

    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]", None] = None,
        workspace: Optional[str] = None,
    ) -> "Store": ...
    @property
    def path(self) -> str: ...
    @property
    def workspace(self) -> str: ...
    def __reduce__(self) -> tuple[type["Store"], tuple[str, str]]: ...
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
    ) -> str: ...
    def link(self, parent: str, child: str, soft: bool = False) -> None: ...
    def unlink(self, parent: str, child: str) -> None: ...
    @overload
    def claim(
        self,
        node: str,
        assignee: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        details: Literal[False] = False,
    ) -> int: ...
    @overload
    def claim(
        self,
        node: str,
        assignee: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        *,
        details: Literal[True],
    ) -> Grant: ...
    def renew(
        self,
        node: str,
        actor: str,
        gen: Optional[int] = None,
        ttl: Optional[_Duration] = None,
        progress: Optional[str] = None,
    ) -> Optional[CancelRequest]: ...
    def release(
        self, node: str, actor: str, gen: int, retry_in: Optional[_Duration] = None
    ) -> int: ...
    def reclaim(
        self, lease: Optional[_Duration] = None, workspace: Optional[str] = None
    ) -> builtins.list[tuple[str, int]]: ...
    def complete(
        self,
        node: str,
        gen: int,
        status: str = "done",
        actor: Optional[str] = None,
        note: Optional[str] = None,
        output: _Json = None,
    ) -> None: ...
    def complete_many(
        self, completions: Union[Sequence[_Completion], str, bytes, bytearray]
    ) -> builtins.list[tuple[str, _Finished]]: ...
    def cancel(
        self,
        node: str,
        reason: Optional[str] = None,
        actor: Optional[str] = None,
        gen: Optional[int] = None,
    ) -> bool: ...
    def reopen(self, node: str, gen: Optional[int] = None) -> int: ...
    def get(self, node: str) -> Node: ...
    def list(
        self,
        status: Optional[str] = None,
        ready: Optional[bool] = None,
        holder: Optional[str] = None,
        archived: bool = False,
        terminal: bool = False,
        workspace: Optional[str] = None,
    ) -> builtins.list[Node]: ...
    def next(
        self, role: Optional[str] = None, workspace: Optional[str] = None
    ) -> Optional[str]: ...
    def ready(
        self, role: Optional[str] = None, workspace: Optional[str] = None
    ) -> builtins.list[Pick]: ...
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
    ) -> Optional[tuple[str, int]]: ...
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
    ) -> Optional[Grant]: ...
    def claim_next_many(
        self,
        assignee: str,
        count: int,
        role: Optional[str] = None,
        ttl: Optional[_Duration] = None,
        workspace: Optional[str] = None,
        wait: Optional[_Duration] = None,
    ) -> builtins.list[Grant]: ...
    def watch(
        self, since: Optional[int] = None, timeout: Optional[_Duration] = None
    ) -> Watch: ...
    def log(
        self, node: Optional[str] = None, since: Optional[int] = None
    ) -> builtins.list[Event]: ...
    def config(
        self,
        *,
        default_ttl: _Duration = ...,
        max_held: Optional[int] = None,
        max_attempts: Optional[int] = ...,
        retry_delay: Optional[_Duration] = None,
        retry_delay_max: Optional[_Duration] = None,
    ) -> Settings: ...
    def archive(
        self,
        *nodes: str,
        older_than: Optional[_Duration] = None,
        workspace: Optional[str] = None,
    ) -> int: ...
    def unarchive(self, node: str) -> str: ...
    def import_plan(
        self,
        plan: Union[dict[str, Any], str, bytes, bytearray],
        workspace: Optional[str] = None,
    ) -> builtins.list[tuple[str, str]]: ...
    def graph(
        self, format: str = "dot", all: bool = False, workspace: Optional[str] = None
    ) -> str: ...
    def check(self) -> Report: ...
    def call(
        self, verb: str, args: Optional[dict[str, Any]] = None, **kwargs: Any
    ) -> Any: ...
    def lease_next(
        self,
        assignee: str,
        ttl: Optional[_Duration] = None,
        role: Optional[str] = None,
        workspace: Optional[str] = None,
        on_error: str = "failed",
        on_lost: Optional[Callable[[ClaimdagErrorLike], object]] = None,
        wait: Optional[_Duration] = None,
        on_cancel: Optional[Callable[[CancelRequest], object]] = None,
    ) -> LeaseNext: ...
    def aclaim_next(
        self, *args: Any, **kwargs: Any
    ) -> Coroutine[Any, Any, Optional[tuple[str, int]]]: ...
    def aclaim_next_many(
        self, *args: Any, **kwargs: Any
    ) -> Coroutine[Any, Any, builtins.list[Grant]]: ...
    # For claimdag.aio: the store's version, a bounded wait for a write after a version,
    # a wait argument in milliseconds, the seconds until a change by time alone.
    def _version(self) -> int: ...
    def _wait_change(self, seen: int, timeout: _Duration) -> int: ...
    def _wait_ms(self, wait: _Duration) -> int: ...
    def _next_change_in(self) -> Optional[float]: ...
    def alease_next(self, *args: Any, **kwargs: Any) -> "AsyncLeaseNext": ...

@final
class Lease:
    """A live claim that renews itself; finish it with complete() or release()."""

    @property
    def id(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def actor(self) -> str: ...
    @property
    def node(self) -> Node: ...
    @property
    def lost(self) -> bool: ...
    @property
    def finished(self) -> bool: ...
    @property
    def grant(self) -> Grant: ...
    @property
    def inputs(self) -> dict[str, _Json]: ...
    @property
    def cancel_requested(self) -> Optional[CancelRequest]: ...
    @overload
    def progress(self, text: str, now: Literal[False] = False) -> None: ...
    @overload
    def progress(self, text: str, now: bool) -> Optional[CancelRequest]: ...
    def on_cancel(self, callback: Callable[[CancelRequest], object]) -> None: ...
    def complete(
        self, status: str = "done", note: Optional[str] = None, output: _Json = None
    ) -> None: ...
    def release(self, retry_in: Optional[_Duration] = None) -> None: ...
    def __enter__(self) -> "Lease": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]] = None,
        _exc: Optional[BaseException] = None,
        _tb: Optional[TracebackType] = None,
    ) -> bool: ...

@final
class LeaseNext:
    """What Store.lease_next returns: enter it with `with`; it gives a Lease or None."""

    @property
    def lease(self) -> Optional[Lease]: ...
    def __enter__(self) -> Optional[Lease]: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        tb: Optional[TracebackType] = None,
    ) -> bool: ...

@final
class Watch:
    """The store's events as they are committed: each next() blocks until there is one."""

    def __iter__(self) -> "Watch": ...
    def __next__(self) -> Event: ...

def actor(name: str) -> str:
    """The actor ``name:NAME`` stands for, as 32 hex characters."""

def run_cli(argv: Sequence[Union[str, "os.PathLike[str]"]]) -> int:
    """Runs the claimdag command with argv (argv[0] is the program name); returns its exit
    status."""
