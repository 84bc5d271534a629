"""Lease objects: a claim that renews itself, finishes with its generation, reports a lost
lease, and has an asyncio form."""

from __future__ import annotations

import asyncio
import pathlib
import threading
import time

import pytest

import claimdag
from conftest import ME, YOU


def test_renewal_keeps_a_short_lease_alive_across_a_long_task(store: claimdag.Store) -> None:
    nid = store.upsert("long task")
    with store.lease_next(ME, ttl=0.3) as lease:
        assert lease is not None and lease.id == nid and lease.generation == 2
        assert lease.node.summary == "long task"
        time.sleep(1.2)  # four leases long: only renewal keeps the claim
        other = claimdag.Store(store.path)
        assert other.reclaim() == [], "nothing expired: the lease was renewed"
        assert not lease.lost
    node = store.get(nid)
    assert (node.status, node.generation, node.completed_by) == ("done", 2, ME)
    renews = [e for e in store.log(nid) if e.verb == "renew"]
    assert len(renews) >= 3


def test_nothing_ready_enters_as_none(store: claimdag.Store) -> None:
    with store.lease_next(ME, ttl=10) as lease:
        assert lease is None


def test_a_lost_lease_is_reported_and_never_completes(store: claimdag.Store) -> None:
    nid = store.upsert("will be taken away")
    told = threading.Event()
    seen: list[BaseException] = []

    def on_lost(e: BaseException) -> None:
        seen.append(e)
        told.set()

    with store.lease_next(ME, ttl=0.3, on_lost=on_lost) as lease:
        assert lease is not None
        claimdag.Store(store.path).reclaim(lease=0)  # another process takes the node back
        assert told.wait(5), "on_lost was called"
        assert lease.lost
        assert isinstance(seen[0], claimdag.StaleGeneration)
        gen = claimdag.Store(store.path).claim(nid, YOU)  # and someone else claims it
    node = store.get(nid)
    assert (node.status, node.holder, node.generation) == ("claimed", YOU, gen)
    assert not [e for e in store.log(nid) if e.verb == "complete"]


def test_an_exception_completes_failed_or_releases(store: claimdag.Store) -> None:
    a = store.upsert("raises")
    with pytest.raises(RuntimeError):
        with store.lease_next(ME, ttl=30):
            raise RuntimeError("the work broke")
    assert store.get(a).status == "failed"
    b = store.upsert("retried", max_attempts=3)
    with pytest.raises(RuntimeError):
        with store.lease_next(ME, ttl=30, on_error="release") as lease:
            assert lease is not None and lease.id == b
            raise RuntimeError("try again")
    node = store.get(b)
    assert (node.status, node.generation, node.attempts) == ("todo", 3, 1)
    with pytest.raises(claimdag.InvalidInput):
        store.lease_next(ME, on_error="ignore")


def test_explicit_complete_and_release(store: claimdag.Store) -> None:
    a = store.upsert("explicit")
    with store.lease_next(ME, ttl=30) as lease:
        assert lease is not None
        lease.complete("cancelled", note="not needed")
        assert lease.finished
        with pytest.raises(claimdag.InvalidInput):
            lease.release()
    assert (store.get(a).status, store.get(a).note) == ("cancelled", "not needed")


def test_a_forgotten_lease_is_handed_back(store: claimdag.Store) -> None:
    a = store.upsert("forgotten")
    ctx = store.lease_next(ME, ttl=30)
    assert ctx.lease is not None
    del ctx
    import gc

    gc.collect()
    assert (store.get(a).status, store.get(a).generation) == ("todo", 3)


def test_asyncio_leases_in_several_tasks(store_dir: pathlib.Path) -> None:
    store = claimdag.Store(store_dir)
    store.config(max_held=0)
    ids = {store.upsert(f"async task {i}") for i in range(6)}

    async def worker(name: str) -> list[str]:
        me = claimdag.actor(name)
        done: list[str] = []
        while True:
            async with store.alease_next(me, ttl=0.4) as lease:
                if lease is None:
                    return done
                await asyncio.sleep(0.5)  # longer than the lease: the renewal thread works
                assert not lease.lost
                await lease.complete("done")
                done.append(lease.id)

    async def main() -> list[list[str]]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        t = asyncio.create_task(ticker())
        out = await asyncio.gather(*(worker(f"w{i}") for i in range(3)))
        t.cancel()
        assert ticks > 50, "the event loop kept running while leases were held"
        return list(out)

    results = asyncio.run(main())
    finished = [i for r in results for i in r]
    assert sorted(finished) == sorted(ids), "every node done once"
    assert all(store.get(i).status == "done" for i in ids)


def test_two_example_workers_finish_every_task_once(tmp_path: pathlib.Path) -> None:
    import subprocess
    import sys

    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "worker.py"
    d = tmp_path / "claims"
    procs = [
        subprocess.Popen([sys.executable, str(example), str(d), f"w{i}", "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    done = [line.split()[0] for out, _ in outs for line in out.splitlines()]
    assert len(done) == 20 and len(set(done)) == 20
    store = claimdag.Store(d)
    assert [n.status for n in store.list(terminal=True)] == ["done"] * 20


def test_a_finish_refused_as_stale_marks_the_lease_lost(store: claimdag.Store) -> None:
    # ttl of an hour: the renewal (every 20 minutes) does not notice; the refusal does.
    def take_away(nid: str) -> None:
        other = claimdag.Store(store.path)
        other.reclaim(lease=0)
        other.claim(nid, YOU)

    a = store.upsert("taken away, then the block ends")
    with pytest.raises(claimdag.StaleGeneration):
        with store.lease_next(ME, ttl=3600) as lease:
            assert lease is not None and lease.id == a
            take_away(a)
    assert lease.lost and lease.finished
    assert "lost=True" in repr(lease)
    node = store.get(a)
    assert (node.status, node.holder) == ("claimed", YOU)

    b = store.upsert("taken away, then completed by hand")
    with store.lease_next(ME, ttl=3600) as lease:
        assert lease is not None and lease.id == b
        take_away(b)
        with pytest.raises(claimdag.StaleGeneration):
            lease.complete("done")
        assert lease.lost
    node = store.get(b)
    assert (node.status, node.holder) == ("claimed", YOU)
