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
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
)

from claimdag._claimdag import CancelRequest, Grant, Lease, LeaseNext, Node, Store

if TYPE_CHECKING:
    # The stubs' closed sets (claimdag/_claimdag.pyi): a status a node finishes with, and a
    # duration (seconds or a timedelta).
    from claimdag.types import Duration as _Duration, Finished as _Finished

__all__ = ["AsyncLease", "AsyncLeaseNext", "aclaim_next", "aclaim_next_many"]

T = TypeVar("T")

#: What ``Store.claim_next`` answers: ``(id, generation)``, a Grant (``details=True``) or
#: None.
_Claimed = Union[Tuple[str, int], Grant, None]

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
        """The follower of `store`'s writes (one per store path)."""
        with cls._guard:
            changes = cls._by_path.get(store.path)
            if changes is None:
                changes = cls._by_path[store.path] = cls(store)
            return changes

    def waiter(self, seen: int) -> _Waiter:
        """A future set once a write after version `seen` is committed (made in the running
        event loop), with its loop and `seen`; starts the following thread if needed."""
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
        """Drops waiter `w` (woken or given up)."""
        with self._lock:
            if w in self._waiters:
                self._waiters.remove(w)

    def _follow(self) -> None:
        """The following thread: wakes the waiters each committed write concerns; ends once
        none is left."""
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


async def _until(
    store: Store, wait: _Duration, look: Callable[[], Optional[T]]
) -> Optional[T]:
    """Runs `look` (in a worker thread) until it answers something, waiting for the store
    to change in between, for up to `wait` (seconds or a timedelta); None when the wait ran
    out. A bad `wait` raises as `claim_next` refuses it (InvalidInput, TypeError)."""
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
) -> _Claimed:
    """What ``store.aclaim_next(*args, **kwargs)`` runs: ``Store.claim_next`` with the same
    arguments, in a worker thread; with ``wait=``, waits for a node to become ready without
    holding a thread.

    Args:
        store: The store.
        args: ``claim_next``'s positional arguments.
        kwargs: ``claim_next``'s keyword arguments, ``wait`` included.

    Returns:
        What ``claim_next`` returns: ``(id, generation)``, the Grant with ``details=True``,
        or None when nothing is ready (by the end of the wait).

    Raises:
        ClaimdagError: As ``claim_next`` raises (``AssigneeBusy``, ``InvalidInput``).
    """
    kw = dict(kwargs or {})
    wait = kw.pop("wait", None)

    def look() -> _Claimed:
        # The arguments are not known statically: the answer is any of claim_next's.
        return cast(_Claimed, store.claim_next(*args, **kw))

    if wait is None:
        return await asyncio.to_thread(look)
    return await _until(store, wait, look)


async def aclaim_next_many(
    store: Store, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]
) -> List[Grant]:
    """What ``store.aclaim_next_many(*args, **kwargs)`` runs: ``Store.claim_next_many`` with
    the same arguments, in a worker thread; with ``wait=``, waits for work as
    ``aclaim_next`` does.

    Args:
        store: The store.
        args: ``claim_next_many``'s positional arguments.
        kwargs: ``claim_next_many``'s keyword arguments, ``wait`` included.

    Returns:
        The Grants, ``[]`` when nothing is ready (by the end of the wait).

    Raises:
        ClaimdagError: As ``claim_next_many`` raises (``AssigneeBusy``, ``InvalidInput``).
    """
    kw = dict(kwargs or {})
    wait = kw.pop("wait", None)
    if wait is None:
        return await asyncio.to_thread(store.claim_next_many, *args, **kw)

    def look() -> Optional[List[Grant]]:
        return store.claim_next_many(*args, **kw) or None

    return await _until(store, wait, look) or []


def _setter(
    loop: asyncio.AbstractEventLoop, event: asyncio.Event
) -> Callable[[CancelRequest], None]:
    """A cancel callback (it runs on the renewal thread) that sets `event` on its loop. It
    holds the event and the loop only, never the lease: no cycle keeps a lease alive."""

    def heard(_request: CancelRequest) -> None:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:
            pass  # the loop is closed

    return heard


class AsyncLease:
    """A :class:`claimdag.Lease` with awaitable ``complete``, ``release`` and
    ``progress_now``, and ``await lease.cancelled()``: what ``async with
    store.alease_next(...) as lease`` gives. Leaving the block finishes it as the threaded
    lease does (``done``, or ``failed``/released on an exception)."""

    def __init__(self, lease: Lease) -> None:
        """Wraps `lease`; made inside a running event loop (``cancelled()`` wakes there).

        Args:
            lease: The threaded lease.

        Raises:
            RuntimeError: No event loop is running.
        """
        self._lease = lease
        self._cancel = asyncio.Event()
        lease.on_cancel(_setter(asyncio.get_running_loop(), self._cancel))

    @property
    def id(self) -> str:
        """The node's id."""
        return self._lease.id

    @property
    def generation(self) -> int:
        """The generation the claim was granted: the fencing token the lease finishes with."""
        return self._lease.generation

    @property
    def actor(self) -> str:
        """The holder (32 hex characters)."""
        return self._lease.actor

    @property
    def node(self) -> Node:
        """The node as it was when it was claimed."""
        return self._lease.node

    @property
    def lost(self) -> bool:
        """True once the lease was lost: drop the work done under it."""
        return self._lease.lost

    @property
    def finished(self) -> bool:
        """True once the lease was completed or released."""
        return self._lease.finished

    @property
    def grant(self) -> Grant:
        """What the claim handed over: the last checkpoint an earlier holder left and
        the outputs of the prerequisites."""
        return self._lease.grant

    @property
    def inputs(self) -> Dict[str, Any]:
        """``{prerequisite id: its output}`` for every prerequisite done at the claim (None
        for one that gave no output)."""
        return self._lease.inputs

    @property
    def cancel_requested(self) -> Optional[CancelRequest]:
        """The request that this holder stop, once a renewal learned of one (None before)."""
        return self._lease.cancel_requested

    def progress(self, text: str) -> None:
        """Leaves a checkpoint (at most 64 KiB), sent with the next renewal (this never
        blocks): the next holder receives it if this one stops. A larger one, or one with a
        NUL, is refused at once and not queued.

        Args:
            text: The checkpoint.

        Raises:
            InvalidInput: The lease was completed or released already, or the checkpoint is
                over 64 KiB or holds a NUL (the lease lives on).
        """
        self._lease.progress(text)

    async def progress_now(self, text: str) -> Optional[CancelRequest]:
        """Leaves a checkpoint at once: a renewal, in a worker thread.

        Args:
            text: The checkpoint (at most 64 KiB; see ``progress``).

        Returns:
            The cancel request made of the holder, or None.

        Raises:
            InvalidInput: The lease was finished already, or the checkpoint is too large.
            StaleGeneration: The renewal was refused (also NotHolder, NotClaimed,
                Terminal); the lease is lost.
        """
        return await asyncio.to_thread(self._lease.progress, text, True)

    def on_cancel(self, callback: Callable[[CancelRequest], object]) -> None:
        """Calls ``callback(request)`` on the renewal thread once the holder is asked to
        stop (at once if it was already).

        Args:
            callback: Called with the CancelRequest; it runs on another thread, so use
                ``loop.call_soon_threadsafe`` to reach the event loop.
        """
        self._lease.on_cancel(callback)

    async def cancelled(self) -> CancelRequest:
        """Waits until a renewal learns that someone asked the holder to stop. Use it with
        ``asyncio.wait`` or a task group to stop the work.

        Returns:
            The CancelRequest.
        """
        await self._cancel.wait()
        request = self._lease.cancel_requested
        assert request is not None
        return request

    async def complete(
        self, status: _Finished = "done", note: Optional[str] = None, output: Any = None
    ) -> None:
        """Finishes the node at the granted generation, in a worker thread.

        Args:
            status: "done", "failed" or "cancelled".
            note: A note to leave on the node.
            output: What it produced: any value ``json.dumps`` takes (at most 64 KiB as
                JSON), handed to its dependents as an input.

        Raises:
            StaleGeneration: The lease was lost; nothing changes.
            InvalidInput: A bad status, an output too large (the lease stays held: complete
                it again), or the lease was completed or released already.
            TypeError: ``output`` is not a JSON value.
        """
        await asyncio.to_thread(self._lease.complete, status, note, output)

    async def release(self, retry_in: Optional[_Duration] = None) -> None:
        """Hands the claim back at the granted generation, in a worker thread.

        Args:
            retry_in: Not granted again for that long (seconds or a timedelta), in place
                of the store's ``retry_delay`` backoff.

        Raises:
            StaleGeneration: The lease was lost.
            InvalidInput: The lease was completed or released already, or ``retry_in`` is
                malformed.
        """
        await asyncio.to_thread(self._lease.release, retry_in)

    def __repr__(self) -> str:
        """``AsyncLease(id=..., generation=..., lost=...)``."""
        return f"Async{self._lease!r}"


class AsyncLeaseNext:
    """What ``store.alease_next(...)`` returns: enter it with ``async with``. With
    ``wait=``, entering waits for a node to become ready without holding a thread."""

    def __init__(
        self, store: Store, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]
    ) -> None:
        """Keeps ``Store.lease_next``'s arguments for entering; nothing is claimed yet.

        Args:
            store: The store.
            args: ``lease_next``'s positional arguments.
            kwargs: ``lease_next``'s keyword arguments, ``wait`` included.
        """
        self._store = store
        self._args = args
        self._kwargs = kwargs or {}
        self._ctx: Optional[LeaseNext] = None
        self._finished = False

    @property
    def finished(self) -> bool:
        """True when entering found nothing ready and nothing that can become ready
        (``Store.finished``): the work is done, stop; False otherwise: wait."""
        return self._finished

    async def __aenter__(self) -> Optional[AsyncLease]:
        """Claims the next ready node (waiting up to ``wait`` for one) and holds it.

        Returns:
            The AsyncLease, or None when nothing is ready.

        Raises:
            ClaimdagError: As ``Store.lease_next`` raises (``AssigneeBusy``,
                ``InvalidInput``).
        """
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
        if self._ctx is None or self._ctx.lease is None:
            role, ws = self._kwargs.get("role"), self._kwargs.get("workspace")
            self._finished = await asyncio.to_thread(store.finished, role, ws)
            return None
        lease = self._ctx.__enter__()
        return None if lease is None else AsyncLease(lease)

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool:
        """Leaves the block: "done" on a clean exit, else "failed" or released
        (``on_error``); nothing for a lease finished already or lost, or for no lease.

        Returns:
            False: the block's exception, if any, propagates.

        Raises:
            ClaimdagError: Finishing was refused on a clean exit.
        """
        if self._ctx is None:
            return False
        return await asyncio.to_thread(self._ctx.__exit__, exc_type, exc, tb)
