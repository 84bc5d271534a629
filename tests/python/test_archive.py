"""archive and unarchive: finished nodes move out of the live state and back unchanged, a
node waiting on an archived node keeps seeing how it ended, and list(archived=True) shows
the archive."""

from __future__ import annotations

import datetime
import pathlib

import pytest

import claimdag
from conftest import ME, files


def _finish(store: claimdag.Store, nid: str, status: str = "done") -> None:
    gen = store.claim(nid, ME)
    store.complete(nid, gen=gen, status=status)


def test_round_trip(store: claimdag.Store) -> None:
    a = store.upsert("parse the manifest header", labels=["parser"], priority=3)
    _finish(store, a)
    before = store.get(a)
    assert not before.archived

    assert store.archive(a) == 1
    gone = store.get(a)   # get still finds it, in the archive
    assert gone.archived and gone.status == "done"
    assert store.list(terminal=True) == []
    assert [n.id for n in store.list(archived=True)] == [a]
    assert store.check().ok and store.check().archived == 1

    assert store.unarchive(a) == "done"
    back = store.get(a)
    assert not back.archived
    assert (back.status, back.generation, back.labels, back.priority) == (
        before.status, before.generation, before.labels, before.priority)
    assert [n.id for n in store.list(terminal=True)] == [a]
    assert store.list(archived=True) == []
    verbs = [e.verb for e in store.log(a)]
    assert verbs[-2:] == ["archive", "unarchive"]


def test_prefix_and_several_nodes(store: claimdag.Store) -> None:
    a, b, c = (store.upsert(s) for s in ("a", "b", "c"))
    _finish(store, a)
    _finish(store, b, "failed")
    _finish(store, c, "cancelled")
    assert store.archive(a[:8], b + "...", b) == 2   # the same node twice counts once
    assert sorted(n.id for n in store.list(archived=True)) == sorted([a, b])
    assert store.archive(a) == 0                     # archived already: nothing moves
    assert store.unarchive(b[:10]) == "failed"


def test_no_arguments_archives_every_finished_node(store: claimdag.Store) -> None:
    done = [store.upsert(f"done {i}") for i in range(3)]
    for nid in done:
        _finish(store, nid)
    live = store.upsert("still to do")
    other = store.upsert("elsewhere", workspace="other")
    _finish(store, other)

    assert store.archive() == 3
    assert [n.id for n in store.list(terminal=True)] == [live]
    assert [n.id for n in store.list(archived=True)] == done
    # The other workspace is untouched until it is named.
    assert [n.id for n in store.list(terminal=True, workspace="other")] == [other]
    assert store.archive(workspace="other") == 1
    assert [n.id for n in store.list(archived=True, workspace="other")] == [other]


def test_older_than(store: claimdag.Store) -> None:
    a = store.upsert("finished just now")
    _finish(store, a)
    assert store.archive(older_than=3600) == 0
    assert store.archive(older_than=datetime.timedelta(hours=1)) == 0
    assert store.archive(older_than=0) == 1
    assert store.get(a).archived


def test_waiting_on_an_archived_node(store: claimdag.Store) -> None:
    a = store.upsert("build the parser")
    b = store.upsert("test the parser")
    store.link(a, b)
    _finish(store, a)
    assert store.get(b).ready
    assert store.archive(a) == 1

    n = store.get(b)
    assert (n.ready, n.display) == (True, "ready")
    assert store.next() == b
    assert [p.id for p in store.ready()] == [b]
    assert store.claim_next(ME) == (b, n.generation + 1)


def test_archived_failed_prerequisite_still_blocks(store: claimdag.Store) -> None:
    a = store.upsert("build the parser")
    b = store.upsert("test the parser")
    store.link(a, b)
    _finish(store, a, "failed")
    assert store.archive(a) == 1
    assert not store.get(b).ready
    with pytest.raises(claimdag.NotReady):
        store.claim(b, ME)


def test_list_archived_filters(store: claimdag.Store) -> None:
    a, b = store.upsert("a"), store.upsert("b")
    _finish(store, a)
    _finish(store, b, "cancelled")
    store.archive()
    assert [n.id for n in store.list(archived=True, status="cancelled")] == [b]
    assert [n.id for n in store.list(archived=True, status="done")] == [a]
    assert all(n.archived for n in store.list(archived=True))
    assert store.list(archived=True, workspace="other") == []


def test_refusals_write_nothing(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    a = store.upsert("not finished")
    b = store.upsert("finished")
    _finish(store, b)
    before = files(store_dir)
    with pytest.raises(claimdag.InvalidInput) as e:
        store.archive(b, a)
    assert "not finished" in str(e.value)
    with pytest.raises(claimdag.NotFound):
        store.archive("f" * 32)
    with pytest.raises(claimdag.InvalidInput):
        store.archive(older_than=-1)
    with pytest.raises(TypeError):
        store.archive(older_than="1h")
    with pytest.raises(claimdag.InvalidInput) as e:
        store.unarchive(a)
    assert "not archived" in str(e.value)
    with pytest.raises(claimdag.NotFound):
        store.unarchive("f" * 32)
    assert files(store_dir) == before
