"""asyncio forms: ``await store.aclaim_next(me, wait=60)`` and
``async with store.alease_next(me, ttl=60, wait=60) as lease:``. The lease talks as the
threaded one does (``progress``, ``cancel_requested``, ``inputs``, ``complete(output=...)``),
and a task can ``await lease.cancelled()``: it returns once someone asked the holder to stop.

Each look at the store (a claim attempt, a finish) runs briefly in a worker thread
(``asyncio.to_thread``) and the lease renews itself on its own thread, so nothing here blocks
the event loop; many tasks may hold leases at once. A task that waits for work holds no
thread while it waits: one thread per store follows the store's writes for every waiting
task of every event loop, and wakes them when a write is committed (by any process), or
when a claim runs out or a ``not_before`` passes, whichever comes first.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, TypeVar

from claimdag._claimdag import CancelRequest, Grant, Lease, LeaseNext, Node, Store

__all__ = ["AsyncLease", "AsyncLeaseNext", "aclaim_next", "aclaim_next_many"]

T = TypeVar("T")

#: A task waiting for a write after a version: its loop, its future and that version.
_Waiter = Tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]", int]


def _wake(fut: "asyncio.Future[None]") -> None:
    if not fut.done():
        fut.set_result(None)


class _Changes:
    """Follows one store's writes on one thread while any task waits on it."""

    _by_path: Dict[str, "_Changes"] = {}
    _guard = threading.Lock()

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._waiters: List[_Waiter] = []
        self._thread: Optional[threading.Thread] = None

    @classmethod
    def of(cls, store: Store) -> "_Changes":
        with cls._guard:
            changes = cls._by_path.get(store.path)
            if changes is None:
                changes = cls._by_path[store.path] = cls(store)
            return changes

    def waiter(self, seen: int) -> _Waiter:
        """A future set once a write after version `seen` is committed."""
        loop = asyncio.get_running_loop()
        w: _Waiter = (loop, loop.create_future(), seen)
        with self._lock:
            self._waiters.append(w)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._follow, name="claimdag-aio-changes", daemon=True
                )
                self._thread.start()
        return w

    def forget(self, w: _Waiter) -> None:
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)

    def _follow(self) -> None:
        while True:
            with self._lock:
                if not self._waiters:
                    self._thread = None
                    return
                low = min(seen for _, _, seen in self._waiters)
            try:
                # Half a second at most: a waiter that went away is noticed.
                version = self._store._wait_change(low, 0.5)
            except Exception:  # noqa: BLE001 - the waiters look again and see the error
                version = low + 1
            with self._lock:
                woken = [w for w in self._waiters if w[2] < version]
                self._waiters = [w for w in self._waiters if w[2] >= version]
            for loop, fut, _ in woken:
                try:
                    loop.call_soon_threadsafe(_wake, fut)
                except RuntimeError:
                    pass  # its loop is closed


async def _until(store: Store, wait: Any, look: Callable[[], Optional[T]]) -> Optional[T]:
    """Runs `look` (in a worker thread) until it answers something, waiting for the store
    to change in between, for up to `wait` (seconds or a timedelta)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + store._wait_ms(wait) / 1000

    def once() -> Tuple[int, Optional[T], Optional[float]]:
        # The version first: a write after it wakes the wait below at once.
        seen = store._version()
        got = look()
        return seen, got, store._next_change_in() if got is None else None

    changes = _Changes.of(store)
    while True:
        seen, got, by_time = await asyncio.to_thread(once)
        left = deadline - loop.time()
        if got is not None or left <= 0:
            return got
        timeout = left if by_time is None else min(left, by_time + 0.001)
        w = changes.waiter(seen)
        try:
            await asyncio.wait_for(w[1], timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            changes.forget(w)


async def aclaim_next(
    store: Store, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]
) -> Optional[Tuple[str, int]]:
    """``store.aclaim_next(...)``: ``Store.claim_next`` with the same arguments; with
    ``wait=``, waits for a node to become ready without holding a thread."""
    kw = dict(kwargs or {})
    wait = kw.pop("wait", None)
    if wait is None:
        return await asyncio.to_thread(store.claim_next, *args, **kw)
    return await _until(store, wait, lambda: store.claim_next(*args, **kw))


async def aclaim_next_many(
    store: Store, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]
) -> List[Grant]:
    """``store.aclaim_next_many(...)``: ``Store.claim_next_many`` with the same arguments;
    with ``wait=``, waits for work as ``aclaim_next`` does."""
    kw = dict(kwargs or {})
    wait = kw.pop("wait", None)
    if wait is None:
        return await asyncio.to_thread(store.claim_next_many, *args, **kw)
    got = await _until(store, wait, lambda: store.claim_next_many(*args, **kw) or None)
    return got or []


def _setter(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> Callable[[Any], None]:
    """A cancel callback (it runs on the renewal thread) that sets `event` on its loop. It
    holds the event and the loop only, never the lease: no cycle keeps a lease alive."""

    def heard(_request: Any) -> None:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:
            pass  # the loop is closed

    return heard


class AsyncLease:
    """A :class:`claimdag.Lease` with awaitable ``complete``, ``release`` and
    ``progress_now``, and ``await lease.cancelled()``. Made inside a running event loop."""

    def __init__(self, lease: Lease) -> None:
        self._lease = lease
        self._cancel = asyncio.Event()
        lease.on_cancel(_setter(asyncio.get_running_loop(), self._cancel))

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

    @property
    def grant(self) -> Grant:
        return self._lease.grant

    @property
    def inputs(self) -> Dict[str, Any]:
        """``{prerequisite id: its output}`` for every prerequisite done at the claim."""
        return self._lease.inputs

    @property
    def cancel_requested(self) -> Optional[CancelRequest]:
        return self._lease.cancel_requested

    def progress(self, text: str) -> None:
        """Leaves a checkpoint, sent with the next renewal (this never blocks)."""
        self._lease.progress(text)

    async def progress_now(self, text: str) -> Optional[CancelRequest]:
        """Leaves a checkpoint at once (a renewal in a worker thread); returns the cancel
        request made of the holder, or None."""
        return await asyncio.to_thread(self._lease.progress, text, True)

    def on_cancel(self, callback: Callable[[CancelRequest], object]) -> None:
        """Calls ``callback(request)`` on the renewal thread once the holder is asked to
        stop (at once if it was already)."""
        self._lease.on_cancel(callback)

    async def cancelled(self) -> CancelRequest:
        """Returns once a renewal learned that someone asked the holder to stop: the
        request. Use it with ``asyncio.wait`` or a task group to stop the work."""
        await self._cancel.wait()
        request = self._lease.cancel_requested
        assert request is not None
        return request

    async def complete(
        self, status: str = "done", note: Optional[str] = None, output: Any = None
    ) -> None:
        await asyncio.to_thread(self._lease.complete, status, note, output)

    async def release(self, retry_in: Any = None) -> None:
        """Hands the claim back; ``retry_in`` (seconds or a timedelta): not granted again
        for that long."""
        await asyncio.to_thread(self._lease.release, retry_in)

    def __repr__(self) -> str:
        return f"Async{self._lease!r}"


class AsyncLeaseNext:
    """What ``store.alease_next(...)`` returns: enter it with ``async with``. With
    ``wait=``, entering waits for a node to become ready without holding a thread."""

    def __init__(self, store: Store, args: tuple[Any, ...], kwargs: Optional[dict[str, Any]]):
        self._store = store
        self._args = args
        self._kwargs = kwargs or {}
        self._ctx: Optional[LeaseNext] = None

    async def __aenter__(self) -> Optional[AsyncLease]:
        kw = dict(self._kwargs)
        wait = kw.pop("wait", None)
        store, args = self._store, self._args
        if wait is None:
            self._ctx = await asyncio.to_thread(store.lease_next, *args, **kw)
        else:

            def look() -> Optional[LeaseNext]:
                ctx = store.lease_next(*args, **kw)
                return ctx if ctx.lease is not None else None

            self._ctx = await _until(store, wait, look)
        if self._ctx is None:
            return None
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
