"""Type stubs of claimdag.exceptions, whose classes are built at import from the native
module's table of codes (checked with mypy.stubtest against that table)."""

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
    code: ClassVar[str]
    node: Optional[str]
    holder: Optional[str]
    generation: Optional[int]
    path: Optional[str]
    held: Optional[List[str]]
    body: Optional[Dict[str, Any]]

class NotFound(ClaimdagError): ...
class AlreadyClaimed(ClaimdagError): ...
class AssigneeBusy(ClaimdagError): ...
class NotReady(ClaimdagError): ...
class AttemptsExhausted(ClaimdagError): ...
class ResourceConflict(ClaimdagError): ...
class NotClaimed(ClaimdagError): ...
class Terminal(ClaimdagError): ...
class StaleGeneration(ClaimdagError): ...
class NotHolder(ClaimdagError): ...
class Cycle(ClaimdagError): ...
class InvalidInput(ClaimdagError, ValueError): ...
class CorruptStore(ClaimdagError): ...
class StoreIOError(ClaimdagError, OSError): ...
class InternalError(ClaimdagError): ...

BY_CODE: Dict[str, Type[ClaimdagError]]
