"""The fence: a worker whose lease ran out and was reclaimed cannot finish the node."""

from __future__ import annotations

import datetime
import time

import pytest

import claimdag
from conftest import ME, YOU


def test_stale_worker_is_fenced_after_reclaim(store: claimdag.Store) -> None:
    nid = store.upsert("reject a manifest with no header")
    gen = store.claim(nid, YOU, ttl=0.2)
    assert gen == 2
    time.sleep(0.3)

    assert store.reclaim() == [(nid, 3)]
    before = store.get(nid)
    assert (before.status, before.generation, before.holder) == ("todo", 3, None)

    with pytest.raises(claimdag.StaleGeneration) as stale:
        store.complete(nid, gen=gen, status="done")
    assert stale.value.code == "stale_generation"
    assert stale.value.generation == 3
    assert stale.value.node == nid
    assert store.get(nid) == before, "a refused call changes nothing"

    with pytest.raises(claimdag.StaleGeneration):
        store.renew(nid, YOU, gen=gen)
    with pytest.raises(claimdag.StaleGeneration):
        store.release(nid, YOU, gen)
    assert store.get(nid) == before

    # The node goes on: the next claim gets the next generation and may finish it.
    assert store.claim(nid, ME) == 4
    store.complete(nid, gen=4, actor=ME)
    assert store.get(nid).status == "done"


def test_expired_claim_is_handed_back_by_the_next_write(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    gen = store.claim(nid, YOU, ttl=datetime.timedelta(milliseconds=150))
    assert store.get(nid).ttl_ms == 150
    time.sleep(0.25)
    assert store.get(nid).display == "expired"
    assert store.claim(nid, ME) == gen + 2, "expiry moved the generation, then the claim"
    with pytest.raises(claimdag.StaleGeneration):
        store.complete(nid, gen=gen, actor=YOU)


def test_renew_keeps_the_claim_alive(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    gen = store.claim(nid, ME, ttl=0.4)
    for _ in range(4):
        time.sleep(0.15)
        store.renew(nid, ME, gen=gen, ttl=0.4)
    assert store.reclaim() == []
    store.complete(nid, gen=gen, actor=ME)
    assert store.get(nid).status == "done"


def test_reclaim_lease_zero_hands_back_every_claim(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    store.claim(nid, ME)
    assert store.reclaim(lease=0) == [(nid, 3)]
    assert store.reclaim(lease=datetime.timedelta(0)) == []


def test_release_hands_back_with_a_new_generation(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    gen = store.claim(nid, ME)
    assert store.release(nid, ME, gen) == gen + 1
    n = store.get(nid)
    assert (n.status, n.holder, n.attempts) == ("todo", None, 1)
    # The released holder is remembered: its later calls are stale, with or without a gen.
    assert n.last_holder == ME == n.to_dict()["last_holder"]
    with pytest.raises(claimdag.StaleGeneration):
        store.renew(nid, ME)


def test_reopen_moves_the_generation(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    gen = store.claim(nid, ME)
    store.complete(nid, gen, status="failed", note="flaky")
    assert store.get(nid).note == "flaky"
    with pytest.raises(claimdag.StaleGeneration):
        store.reopen(nid, gen=gen - 1)
    assert store.reopen(nid) == gen + 1
    assert store.get(nid).display == "ready"
