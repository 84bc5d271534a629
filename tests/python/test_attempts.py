"""The attempt cap: every hand-back keeps the attempt counter; a node out of attempts is
not ready and refuses claims."""

from __future__ import annotations

import time

import pytest

import claimdag
from conftest import ME


def _use_up(store: claimdag.Store, nid: str, times: int) -> None:
    for _ in range(times):
        gen = store.claim(nid, ME)
        store.release(nid, ME, gen)


def test_store_wide_cap(store: claimdag.Store) -> None:
    settings = store.config(max_attempts=2)
    assert settings.max_attempts == 2
    nid = store.upsert("flaky integration test")
    _use_up(store, nid, 2)

    n = store.get(nid)
    assert (n.status, n.attempts, n.ready, n.display) == ("todo", 2, False, "parked")
    assert n.why is not None and "attempts" in n.why
    assert store.next() is None
    assert store.claim_next(ME) is None
    with pytest.raises(claimdag.AttemptsExhausted) as refused:
        store.claim(nid, ME)
    assert refused.value.code == "attempts_exhausted"
    assert refused.value.node == nid
    assert store.get(nid) == n

    # Lifting the cap makes it ready again; the counter is kept.
    assert store.config(max_attempts=None).max_attempts is None
    assert store.get(nid).ready
    assert store.claim(nid, ME) == n.generation + 1
    assert store.get(nid).attempts == 3


def test_node_cap_from_upsert(store: claimdag.Store) -> None:
    nid = store.upsert("flaky integration test", max_attempts=1)
    assert store.get(nid).max_attempts == 1
    _use_up(store, nid, 1)
    with pytest.raises(claimdag.AttemptsExhausted):
        store.claim(nid, ME)
    # Raising the node's own cap through upsert gives it one more try.
    store.upsert("flaky integration test", max_attempts=2)
    assert store.claim(nid, ME) > 0


def test_expiry_counts_as_an_attempt(store: claimdag.Store) -> None:
    nid = store.upsert("flaky integration test", max_attempts=1)
    store.claim(nid, ME, ttl=0.05)
    time.sleep(0.1)
    assert [i for i, _ in store.reclaim()] == [nid]
    with pytest.raises(claimdag.AttemptsExhausted):
        store.claim(nid, ME)


@pytest.mark.parametrize("bad", [0, -1])
def test_cap_must_be_positive(store: claimdag.Store, bad: int) -> None:
    with pytest.raises(claimdag.InvalidInput):
        store.config(max_attempts=bad)
    with pytest.raises(claimdag.InvalidInput):
        store.upsert("x", max_attempts=bad)
