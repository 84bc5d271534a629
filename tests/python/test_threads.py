"""Threads sharing one Store: no double grant, and blocking calls release the GIL."""

from __future__ import annotations

import fcntl
import pathlib
import threading
import time

import claimdag
from conftest import actor

THREADS = 4
NODES = 60


def test_threads_share_one_store(store: claimdag.Store) -> None:
    ids = [store.upsert(f"node {i}") for i in range(NODES)]
    barrier = threading.Barrier(THREADS)
    results: dict[int, list[tuple[str, int]]] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        me = actor(200 + n)
        granted: list[tuple[str, int]] = []
        try:
            barrier.wait()
            while (picked := store.claim_next(me)) is not None:
                granted.append(picked)
                nid, gen = picked
                store.renew(nid, me, gen=gen)
                store.complete(nid, gen=gen, actor=me)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        results[n] = granted

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    granted = [g for r in results.values() for g in r]
    assert sorted(nid for nid, _ in granted) == sorted(ids)
    assert all(n.status == "done" for n in store.list(terminal=True))


def test_a_call_waiting_on_the_lock_releases_the_gil(
    store: claimdag.Store, store_dir: pathlib.Path
) -> None:
    store.upsert("first write creates the store")
    done = threading.Event()

    def write() -> None:
        store.upsert("second")
        done.set()

    with open(store_dir / "lock", "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        t = threading.Thread(target=write)
        t.start()
        # While the writer waits for the lock, this thread must keep running Python.
        spins = 0
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            spins += 1
        assert not done.is_set(), "the writer waited for the directory's lock"
        assert spins > 1000
        fcntl.flock(f, fcntl.LOCK_UN)
    t.join(timeout=10)
    assert done.is_set()
    assert len(store.list()) == 2
