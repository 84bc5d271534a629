"""asyncio forms of the lease: ``async with store.alease_next(me, ttl=60) as lease:``.

The claim and the finish run in a worker thread (``asyncio.to_thread``) and the renewal on
the lease's own thread, so nothing here blocks the event loop; many tasks may hold leases
at once.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Optional, Type

from claimdag._claimdag import Lease, LeaseNext, Node, Store

__all__ = ["AsyncLease", "AsyncLeaseNext"]


class AsyncLease:
    """A :class:`claimdag.Lease` with awaitable ``complete`` and ``release``."""

    def __init__(self, lease: Lease) -> None:
        self._lease = lease

    @property
    def id(self) -> str:
        return self._lease.id

    @property
    def generation(self) -> int:
        return self._lease.generation

    @property
    def actor(self) -> str:
        return self._lease.actor

    @property
    def node(self) -> Node:
        return self._lease.node

    @property
    def lost(self) -> bool:
        return self._lease.lost

    @property
    def finished(self) -> bool:
        return self._lease.finished

    async def complete(self, status: str = "done", note: Optional[str] = None) -> None:
        await asyncio.to_thread(self._lease.complete, status, note)

    async def release(self) -> None:
        await asyncio.to_thread(self._lease.release)

    def __repr__(self) -> str:
        return f"Async{self._lease!r}"


class AsyncLeaseNext:
    """What ``store.alease_next(...)`` returns: enter it with ``async with``."""

    def __init__(self, store: Store, args: tuple[Any, ...], kwargs: Optional[dict[str, Any]]):
        self._store = store
        self._args = args
        self._kwargs = kwargs or {}
        self._ctx: Optional[LeaseNext] = None

    async def __aenter__(self) -> Optional[AsyncLease]:
        self._ctx = await asyncio.to_thread(self._store.lease_next, *self._args, **self._kwargs)
        lease = self._ctx.__enter__()
        return None if lease is None else AsyncLease(lease)

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool:
        if self._ctx is None:
            return False
        return await asyncio.to_thread(self._ctx.__exit__, exc_type, exc, tb)
