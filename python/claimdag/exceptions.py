"""The exceptions of claimdag: one base class and one subclass per stable error code.

Every error the store reports is a :class:`ClaimdagError`. Its ``code`` is the snake_case
code every front door shares (the CLI's ``--json`` errors, the C ABI's ``claimdag_code_str``),
and its context attributes say what the refusal was about:

- ``node``: the node the error is about (32 hex characters), or None;
- ``holder``: the actor holding the node's claim, when the error names one, or None;
- ``generation``: the node's current generation, when the error names it, or None;
- ``path``: the file or directory of a ``corrupt`` or ``io`` error, or None;
- ``held``: for ``assignee_busy``, the nodes the actor already holds, or None;
- ``body``: the error as every front door reports it in JSON (SPEC section 4):
  ``{"code", "message", ...context}``, the same dict the CLI's ``--json`` writes under
  ``"error"`` and C's ``claimdag_last_error_json`` gives.

A refused call changed nothing, on disk or in memory.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Type

__all__ = [
    "ClaimdagError",
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
    "CorruptStore",
    "StoreIOError",
    "InternalError",
    "BY_CODE",
]


class ClaimdagError(Exception):
    """Base class of every error claimdag reports."""

    code: ClassVar[str]
    node: Optional[str] = None
    holder: Optional[str] = None
    generation: Optional[int] = None
    path: Optional[str] = None
    held: Optional[List[str]] = None
    body: Optional[Dict[str, Any]] = None


class NotFound(ClaimdagError):
    """No such node (or no node matches the prefix)."""

    code = "not_found"


class AlreadyClaimed(ClaimdagError):
    """The node is claimed already, by anyone, the caller included; ``holder`` and
    ``generation`` name the live claim, so a resumed worker can recognise its own."""

    code = "already_claimed"


class AssigneeBusy(ClaimdagError):
    """The actor already holds as many live claims as the store's ``max_held`` allows;
    ``held`` names them (a resumed worker can find its claim, or ask ``claim_next`` with
    ``resume=True``)."""

    code = "assignee_busy"


class NotReady(ClaimdagError):
    """The node waits on prerequisites, or is blocked by one that failed or was cancelled."""

    code = "not_ready"


class AttemptsExhausted(ClaimdagError):
    """The node was claimed as many times as its attempt cap allows."""

    code = "attempts_exhausted"


class ResourceConflict(ClaimdagError):
    """A live claim in the workspace holds an overlapping resource; ``holder`` and
    ``generation`` name that claim."""

    code = "resource_conflict"


class NotClaimed(ClaimdagError):
    """The verb needs a claimed node and the node is not claimed."""

    code = "not_claimed"


class Terminal(ClaimdagError):
    """The node is finished (done, failed or cancelled)."""

    code = "terminal"


class StaleGeneration(ClaimdagError):
    """The generation given is not the node's: the claim was handed back (its lease ran out
    or it was reclaimed) or someone else claimed it since. ``generation`` is the current one.
    The work done under the old generation must be dropped."""

    code = "stale_generation"


class NotHolder(ClaimdagError):
    """The actor given is not the holder of the claim; ``holder`` names the holder."""

    code = "not_holder"


class Cycle(ClaimdagError):
    """The link would close a cycle (or link a node to itself)."""

    code = "cycle"


class InvalidInput(ClaimdagError, ValueError):
    """An argument is malformed; the message says what was wrong. Also a ValueError."""

    code = "invalid_input"


class CorruptStore(ClaimdagError):
    """A store file is damaged or malformed; ``path`` names it. It was left as it was."""

    code = "corrupt"


class StoreIOError(ClaimdagError, OSError):
    """The operating system refused a file operation; ``path`` names the file. Also an
    OSError, with ``errno``, ``strerror`` and ``filename`` set when the OS gave an errno."""

    code = "io"


class InternalError(ClaimdagError):
    """A bug in claimdag (a caught panic). Nothing was changed."""

    code = "internal"


#: The class of each code, as the native module raises them.
BY_CODE: Dict[str, Type[ClaimdagError]] = {
    cls.code: cls
    for cls in (
        NotFound,
        AlreadyClaimed,
        AssigneeBusy,
        NotReady,
        AttemptsExhausted,
        ResourceConflict,
        NotClaimed,
        Terminal,
        StaleGeneration,
        NotHolder,
        Cycle,
        InvalidInput,
        CorruptStore,
        StoreIOError,
        InternalError,
    )
}
