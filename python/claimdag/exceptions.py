"""The exceptions of claimdag: one base class and one subclass per stable error code.

Every error the store reports is a :class:`ClaimdagError`. Its ``code`` is the snake_case
code every front door shares (the CLI's ``--json`` errors, the C ABI's ``claimdag_code_str``),
and its context attributes say what the refusal was about:

- ``node``: the node the error is about (32 hex characters), or None;
- ``holder``: the actor holding the node's claim, when the error names one, or None;
- ``generation``: the node's current generation, when the error names it, or None;
- ``path``: the file or directory of a ``corrupt`` or ``io`` error, or None;
- ``held``: for ``assignee_busy``, the nodes the actor already holds, or None;
- ``body``: the error as every front door reports it in JSON (docs/reference.md, "Exit
  codes and errors"): ``{"code", "message", ...context}``, the same dict the CLI's
  ``--json`` writes under ``"error"`` and C's ``claimdag_last_error_json`` gives.

A refused call changed nothing, on disk or in memory.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Tuple, Type, cast

from claimdag._claimdag import CODES


class ClaimdagError(Exception):
    """Base class of every error claimdag reports; ``except ClaimdagError`` catches them all.

    Attributes:
        code: The stable code of the class (``"not_found"``, ...), as every front door
            reports it.
        node: The node the error is about (32 hex characters), or None.
        holder: The actor holding the node's claim, when the error names one, or None.
        generation: The node's current generation, when the error names it, or None.
        path: The file or directory of a ``corrupt`` or ``io`` error, or None.
        held: For ``assignee_busy``, the nodes the actor already holds, or None.
        body: The error as every front door reports it in JSON: ``{"code", "message",
            ...context}``; None for an error made in Python.
    """

    code: ClassVar[str]
    node: Optional[str] = None
    holder: Optional[str] = None
    generation: Optional[int] = None
    path: Optional[str] = None
    held: Optional[List[str]] = None
    body: Optional[Dict[str, Any]] = None


# The classes come from the core's table of codes (CODES: variant name, code, C value, exit
# status, meaning). Python names a few of them its own way, gives two of them a builtin base
# as well, and says more about the context attributes some of them set.
_NAMES: Dict[str, str] = {
    "corrupt": "CorruptStore",
    "io": "StoreIOError",
    "internal": "InternalError",
}
_ALSO: Dict[str, Tuple[Type[BaseException], ...]] = {
    "invalid_input": (ValueError,),
    "io": (OSError,),
}
_MORE: Dict[str, str] = {
    "already_claimed": "``holder`` and ``generation`` name the live claim, so a resumed "
    "worker can recognise its own.",
    "assignee_busy": "``held`` names them (a resumed worker can find its claim, or ask "
    "``claim_next`` with ``resume=True``).",
    "resource_conflict": "``holder`` and ``generation`` name that claim.",
    "stale_generation": "``generation`` is the current one. The work done under the old "
    "generation must be dropped.",
    "not_holder": "``holder`` names the holder.",
    "invalid_input": "Also a ValueError.",
    "corrupt": "``path`` names it. It was left as it was.",
    "io": "``path`` names the file. Also an OSError, with ``errno``, ``strerror`` and "
    "``filename`` set when the OS gave an errno.",
}


def _make(variant: str, code: str, meaning: str) -> Type[ClaimdagError]:
    name = _NAMES.get(code, variant)
    doc = meaning if code not in _MORE else f"{meaning} {_MORE[code]}"
    bases = (ClaimdagError, *_ALSO.get(code, ()))
    namespace = {"__doc__": doc, "__module__": __name__, "code": code}
    return cast(Type[ClaimdagError], type(name, bases, namespace))


#: The class of each code, as the native module raises them.
BY_CODE: Dict[str, Type[ClaimdagError]] = {
    code: _make(variant, code, meaning) for variant, code, _value, _exit, meaning in CODES
}
globals().update({cls.__name__: cls for cls in BY_CODE.values()})

__all__ = ["ClaimdagError", *(cls.__name__ for cls in BY_CODE.values()), "BY_CODE"]
