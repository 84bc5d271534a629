"""The walkthrough of the README, from Python: two nodes, a link, a claim and its fence."""

from __future__ import annotations

import pytest

import claimdag
from conftest import ME, YOU


def test_walkthrough(store: claimdag.Store) -> None:
    a = store.upsert("parse the manifest header")
    b = store.upsert("reject a manifest with no header", parent=a)
    assert len(a) == 32 and len(b) == 32
    store.link(a, b)

    nodes = store.list()
    assert [n.id for n in nodes] == [a, b]
    assert [n.display for n in nodes] == ["ready", "todo"]
    assert [n.generation for n in nodes] == [1, 1]
    assert store.get(b).deps == (a,)
    assert store.get(b).parent == a

    gen = store.claim(a, ME)
    assert gen == 2

    with pytest.raises(claimdag.AlreadyClaimed) as refused:
        store.claim(a, YOU)
    assert refused.value.holder == ME
    assert refused.value.generation == 2
    assert refused.value.node == a

    store.renew(a, ME)
    assert store.reclaim(lease=60) == []

    store.complete(a, gen=2, status="done")
    done = store.get(a)
    assert (done.status, done.generation, done.completed_by) == ("done", 2, ME)

    child = store.get(b)
    assert child.ready and child.display == "ready"
    assert store.next() == b
    assert store.list() == [child]
    assert store.check().ok


def test_prefixes_and_list_form_resolve(store: claimdag.Store) -> None:
    a = store.upsert("parse the manifest header")
    assert store.get(a[:8]).id == a
    assert store.get(a[:8] + "...").id == a
    assert store.get(a.upper()).id == a
    assert store.claim(a[:12], ME) == 2
    with pytest.raises(claimdag.InvalidInput):
        store.get(a[:7])


def test_upsert_is_idempotent_and_merges(store: claimdag.Store) -> None:
    a = store.upsert("parse the manifest header", priority=2, labels=["parser"])
    assert store.upsert("  parse the manifest header  ") == a
    n = store.get(a)
    assert (n.priority, n.labels) == (2, ("parser",)), "fields left at None keep their value"
    store.upsert("parse the manifest header", role="rust", estimate=3, ref="GH-12")
    n = store.get(a)
    assert (n.role, n.estimate, n.ref, n.priority) == ("rust", 3, "GH-12", 2)
    assert store.upsert("parse the manifest header", kind="bug") != a
    assert len(store.list()) == 2
