"""Time in the module: waiting for work (claim_next and lease_next with `wait`), not_before
and the `scheduled` display word, release with `retry_in`, the backoff settings, watch."""

from __future__ import annotations

import asyncio
import math
import pathlib
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

import claimdag
from conftest import ME, YOU, actor, command, files

# A wait that should end early (a node became ready) ends long before this.
LONG = 30.0


def _cli_later(delay: float, store_dir: pathlib.Path, *args: str) -> subprocess.Popen[bytes]:
    """Another process: after `delay` seconds, the claimdag command with `args`."""
    script = 'sleep "$1"; shift; exec "$@"'
    return subprocess.Popen(
        ["sh", "-c", script, "sh", str(delay), command(), "--dir", str(store_dir), *args]
    )


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_a_waiter_wakes_when_another_process_completes_the_prerequisite(
    store: claimdag.Store, store_dir: pathlib.Path
) -> None:
    first = store.upsert("build the index")
    then = store.upsert("query the index")
    store.link(first, then)
    gen = store.claim(first, YOU)
    assert store.claim_next(ME) is None
    other = _cli_later(0.5, store_dir, "complete", first, "--status", "done", "--gen", str(gen))
    t = time.monotonic()
    got = store.claim_next(ME, wait=LONG)
    took = time.monotonic() - t
    assert other.wait(timeout=60) == 0
    assert got == (then, 2)
    assert 0.3 <= took < LONG / 2, took
    assert store.get(then).holder == ME


def test_a_waiter_in_a_thread_wakes_on_a_write_of_another_process(
    store: claimdag.Store, store_dir: pathlib.Path
) -> None:
    store.upsert("the store exists")
    store.claim_next(YOU)
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(store.claim_next(ME, wait=LONG)))
    waiter.start()
    other = _cli_later(0.3, store_dir, "upsert", "--summary", "arrives later")
    assert other.wait(timeout=60) == 0
    waiter.join(timeout=LONG)
    assert not waiter.is_alive()
    [picked] = got
    assert isinstance(picked, tuple)
    assert store.get(picked[0]).summary == "arrives later"


def test_a_waiter_wakes_when_not_before_passes(store: claimdag.Store) -> None:
    when = datetime.now(timezone.utc) + timedelta(seconds=1)
    nid = store.upsert("after a second", not_before=when)
    node = store.get(nid)
    assert node.display == "scheduled"
    assert not node.ready
    assert node.why is not None and node.why.startswith("scheduled")
    # Rounded up to the millisecond: never before the time given.
    whole = int(when.replace(microsecond=0).timestamp()) * 1000
    assert node.not_before == whole + math.ceil(when.microsecond / 1000)
    assert node.to_dict()["not_before"] == node.not_before
    assert store.claim_next(ME) is None
    got = store.claim_next(ME, wait=timedelta(seconds=LONG))
    assert got == (nid, 2)
    assert _now_ms() >= node.not_before
    # A claim clears it.
    assert store.get(nid).not_before is None


def test_a_wait_that_runs_out_answers_none_after_the_wait(store: claimdag.Store) -> None:
    store.upsert("held by someone else")
    store.claim_next(YOU)
    for wait in (0.6, timedelta(milliseconds=600)):
        t = time.monotonic()
        assert store.claim_next(ME, wait=wait) is None
        took = time.monotonic() - t
        assert 0.6 <= took < 10, took
    t = time.monotonic()
    with store.lease_next(ME, ttl=60, wait=0.4) as lease:
        assert lease is None
    assert time.monotonic() - t >= 0.4


def test_a_waiting_call_releases_the_gil(store: claimdag.Store) -> None:
    store.upsert("held by someone else")
    store.claim_next(YOU)
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(store.claim_next(ME, wait=1.5)))
    waiter.start()
    time.sleep(0.1)
    spins = 0
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        spins += 1
    assert waiter.is_alive(), "still waiting"
    assert spins > 1000
    waiter.join(timeout=LONG)
    assert got == [None]


def test_lease_next_waits_and_releases_with_a_retry(store: claimdag.Store) -> None:
    nid = store.upsert("soon", not_before="+500ms")
    t = time.monotonic()
    with store.lease_next(ME, ttl=60, wait=LONG) as lease:
        assert lease is not None and lease.id == nid
        assert time.monotonic() - t >= 0.3
        before = _now_ms()
        lease.release(retry_in=timedelta(seconds=60))
    node = store.get(nid)
    assert (node.status, node.display, node.generation) == ("todo", "scheduled", 3)
    assert node.not_before is not None
    assert before + 60_000 <= node.not_before <= _now_ms() + 60_000


def test_release_with_retry_in_schedules_the_node(store: claimdag.Store) -> None:
    nid = store.upsert("flaky")
    gen = store.claim(nid, ME)
    before = _now_ms()
    assert store.release(nid, ME, gen, retry_in=90) == gen + 1
    node = store.get(nid)
    assert node.display == "scheduled"
    assert node.not_before is not None
    assert before + 90_000 <= node.not_before <= _now_ms() + 90_000
    assert store.claim_next(ME) is None
    assert [n for n in store.list() if n.display == "scheduled"] == [node]


def test_the_backoff_settings_show_in_not_before(store: claimdag.Store) -> None:
    default = store.config()
    assert (default.retry_delay_ms, default.retry_delay_max_ms) == (0, 3_600_000)
    s = store.config(retry_delay=timedelta(seconds=30), retry_delay_max=100)
    assert (s.retry_delay_ms, s.retry_delay_max_ms) == (30_000, 100_000)
    assert s.to_dict()["retry_delay_ms"] == 30_000
    assert "retry_delay_ms=30000" in repr(s)
    nid = store.upsert("backs off")
    gen = store.claim(nid, ME)
    before = _now_ms()
    store.release(nid, ME, gen)
    nb = store.get(nid).not_before
    assert nb is not None and before + 30_000 <= nb <= _now_ms() + 30_000
    # Both raised, then both lowered: each in the order the core accepts.
    s = store.config(retry_delay=7200, retry_delay_max=10800)
    assert (s.retry_delay_ms, s.retry_delay_max_ms) == (7_200_000, 10_800_000)
    s = store.config(retry_delay=1, retry_delay_max=2)
    assert (s.retry_delay_ms, s.retry_delay_max_ms) == (1000, 2000)


def test_not_before_forms(store: claimdag.Store) -> None:
    before = _now_ms()
    a = store.upsert("relative", not_before="+90s")
    nb = store.get(a).not_before
    assert nb is not None and before + 90_000 <= nb <= _now_ms() + 90_000
    b = store.upsert("rfc 3339", not_before="2030-01-01T00:00:00Z")
    assert store.get(b).not_before == 1_893_456_000_000
    plus_one = timezone(timedelta(hours=1))
    c = store.upsert("aware", not_before=datetime(2030, 1, 1, 1, 0, 0, 500_000, plus_one))
    assert store.get(c).not_before == 1_893_456_000_500
    # An upsert of the same node moves it.
    assert store.upsert("aware", not_before="2031-01-01T00:00:00Z") == c
    assert store.get(c).not_before == 1_924_992_000_000


def test_bad_time_arguments_are_refused_and_change_nothing(
    store: claimdag.Store, store_dir: pathlib.Path
) -> None:
    nid = store.upsert("claimed")
    gen = store.claim(nid, ME)
    before = files(store_dir)
    bad_waits: list[object] = [-1, -0.5, timedelta(seconds=-1), float("inf"), 10**30]
    for wait in bad_waits:
        with pytest.raises(claimdag.InvalidInput, match="wait"):
            store.claim_next(YOU, wait=wait)
        with pytest.raises(ValueError, match="wait"):
            store.lease_next(YOU, ttl=60, wait=wait)
    with pytest.raises(TypeError, match="wait"):
        store.claim_next(YOU, wait="5s")  # type: ignore[arg-type]
    with pytest.raises(claimdag.InvalidInput, match="aware"):
        store.upsert("naive", not_before=datetime(2030, 1, 1))
    for text in ("tomorrow", "+soon", "2030-13-01T00:00:00Z", ""):
        with pytest.raises(claimdag.InvalidInput):
            store.upsert("bad string", not_before=text)
    with pytest.raises(TypeError, match="not_before"):
        store.upsert("a number", not_before=1_893_456_000_000)  # type: ignore[arg-type]
    with pytest.raises(claimdag.InvalidInput, match="retry_in"):
        store.release(nid, ME, gen, retry_in=-5)
    with pytest.raises(claimdag.InvalidInput, match="retry_delay"):
        store.config(retry_delay=7200)  # above the default retry_delay_max of 1h
    with pytest.raises(claimdag.InvalidInput, match="retry_delay"):
        store.config(retry_delay=-1)
    with pytest.raises(claimdag.InvalidInput, match="retry_delay"):
        store.config(default_ttl=60, retry_delay=7200)  # one write: the ttl is not changed
    assert files(store_dir) == before
    node = store.get(nid)
    assert (node.status, node.holder, node.generation) == ("claimed", ME, gen)


def test_watch_yields_the_writes_of_another_process(
    store: claimdag.Store, store_dir: pathlib.Path
) -> None:
    first = store.upsert("before the watch")
    events = store.watch(timeout=LONG)
    other = _cli_later(0.3, store_dir, "upsert", "--summary", "written elsewhere")
    e = next(events)
    assert other.wait(timeout=60) == 0
    assert e.verb == "create"
    assert e.node is not None and e.node != first
    assert store.get(e.node).summary == "written elsewhere"
    # From the start: every event again, in order.
    replay = store.watch(since=0, timeout=0.2)
    assert [x.node for x in replay] == [first, e.node]


def test_watch_with_a_timeout_ends_when_nothing_is_written(store: claimdag.Store) -> None:
    store.upsert("quiet")
    t = time.monotonic()
    assert list(store.watch(timeout=0.5)) == []
    assert time.monotonic() - t >= 0.5


def test_asyncio_waiters_share_one_thread_and_all_wake(store: claimdag.Store) -> None:
    store.upsert("held by someone else")
    store.claim_next(YOU)
    waiters = 12

    async def main() -> tuple[list[object], int, float]:
        before = {t.name for t in threading.enumerate()}
        tasks = [
            asyncio.create_task(store.aclaim_next(actor(300 + i), wait=LONG))
            for i in range(waiters)
        ]
        await asyncio.sleep(0.5)
        assert not any(t.done() for t in tasks)
        # No thread per waiter: one follower thread (and at most the default executor's
        # few idle workers, which the looks used briefly).
        new = [t.name for t in threading.enumerate() if t.name not in before]
        followers = sum(1 for n in new if n == "claimdag-aio-changes")
        others = [n for n in new if n != "claimdag-aio-changes" and not n.startswith("asyncio")]
        assert others == [], others
        t0 = time.monotonic()
        writer = claimdag.Store(store.path)
        await asyncio.to_thread(lambda: [writer.upsert(f"job {i}") for i in range(waiters)])
        got = await asyncio.gather(*tasks)
        return got, followers, time.monotonic() - t0

    got, followers, took = asyncio.run(main())
    assert followers == 1
    assert all(isinstance(g, tuple) for g in got)
    assert len({g[0] for g in got if isinstance(g, tuple)}) == waiters, "one node each"
    assert took < LONG / 2, took


def test_asyncio_waits_run_out_and_lease_waits(store: claimdag.Store) -> None:
    async def main() -> None:
        t = time.monotonic()
        assert await store.aclaim_next(ME, wait=0.5) is None
        assert time.monotonic() - t >= 0.5
        with pytest.raises(claimdag.InvalidInput, match="wait"):
            await store.aclaim_next(ME, wait=-1)
        nid = store.upsert("soon", not_before="+400ms")
        async with store.alease_next(ME, ttl=60, wait=LONG) as lease:
            assert lease is not None and lease.id == nid
            await lease.release(retry_in=60)
        assert store.get(nid).display == "scheduled"
        t = time.monotonic()
        async with store.alease_next(ME, ttl=60, wait=0.3) as none:
            assert none is None
        assert time.monotonic() - t >= 0.3

    asyncio.run(main())
