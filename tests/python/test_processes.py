"""Processes on one store directory: claim_next never grants one node twice."""

from __future__ import annotations

import multiprocessing
import pathlib
from typing import Any, List, Tuple

import claimdag
from conftest import actor

WORKERS = 4
NODES = 40


def _work(store: Any, n: int, barrier: Any, results: Any) -> None:
    """Claims and finishes nodes until none is left; reports what it was granted."""
    if not isinstance(store, claimdag.Store):
        store = claimdag.Store(store)
    me = actor(100 + n)
    granted: List[Tuple[str, int]] = []
    try:
        barrier.wait()
        while True:
            picked = store.claim_next(me, ttl=60)
            if picked is None:
                break
            nid, gen = picked
            granted.append(picked)
            store.complete(nid, gen=gen, actor=me)
        results.put((n, granted, None))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        results.put((n, granted, repr(e)))


def _race(ctx: Any, store_arg: Any, store: claimdag.Store) -> None:
    ids = [store.upsert(f"node {i}") for i in range(NODES)]
    barrier = ctx.Barrier(WORKERS)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_work, args=(store_arg, n, barrier, results)) for n in range(WORKERS)
    ]
    for p in procs:
        p.start()
    reports = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert [err for _, _, err in reports] == [None] * WORKERS
    granted = [g for _, r, _ in reports for g in r]
    assert sorted(nid for nid, _ in granted) == sorted(ids), "every node granted exactly once"
    assert all(gen == 2 for _, gen in granted)
    claims = [e.node for e in store.log() if e.verb == "claim"]
    assert sorted(claims) == sorted(ids), "one claim per node in the history"
    assert all(store.get(i).status == "done" for i in ids)
    assert store.check().ok


def test_spawned_processes_never_share_a_grant(store_dir: pathlib.Path) -> None:
    # A Store pickles as its directory and workspace: each process opens it itself.
    ctx = multiprocessing.get_context("spawn")
    store = claimdag.Store(store_dir)
    _race(ctx, store, store)


def test_spawned_processes_opening_by_path(store_dir: pathlib.Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    _race(ctx, str(store_dir), claimdag.Store(store_dir))


def test_forked_processes_sharing_one_store_object(store_dir: pathlib.Path) -> None:
    # A Store used before fork and then in the children: each child must take the
    # directory's lock through its own open file, or two children would hold it at once.
    ctx = multiprocessing.get_context("fork")
    store = claimdag.Store(store_dir)
    store.list()
    _race(ctx, store, store)
