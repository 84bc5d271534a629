"""claimdag: a shared DAG of work nodes that many workers claim as leases, fenced by a
generation number so a stalled worker cannot finish work that is now someone else's.

    store = claimdag.Store()                      # the default store directory
    nid = store.upsert("parse the manifest header")
    picked = store.claim_next(me, ttl=600)        # (id, generation) or None
    picked = store.claim_next(me, wait=60)        # waits up to a minute for work
    ...
    store.complete(nid, gen=generation)

The package is typed (``py.typed``): its stubs give every closed set of words (statuses,
display words, history verbs, error codes) as a ``Literal`` and every ``to_dict()`` and
dict-shaped argument as a ``TypedDict``, so mypy and pyright refuse ``status="don"``.

See docs/python.md for the full tour.
"""

from claimdag._claimdag import (
    CancelRequest,
    Event,
    Grant,
    Lease,
    LeaseNext,
    Node,
    Pick,
    Report,
    Settings,
    Store,
    Watch,
    __version__,
    actor,
)
from claimdag.exceptions import (
    AlreadyClaimed,
    AssigneeBusy,
    AttemptsExhausted,
    ClaimdagError,
    CorruptStore,
    Cycle,
    InternalError,
    InvalidInput,
    NotClaimed,
    NotFound,
    NotHolder,
    NotReady,
    ResourceConflict,
    StaleGeneration,
    StoreIOError,
    Terminal,
)

__all__ = [
    "Store",
    "Lease",
    "LeaseNext",
    "actor",
    "Node",
    "Event",
    "Pick",
    "Report",
    "Settings",
    "Grant",
    "CancelRequest",
    "Watch",
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
    "__version__",
]
