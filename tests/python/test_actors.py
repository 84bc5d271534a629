"""Actor names through the Python module: kept at first use, added with a note, and given
beside the ids of nodes, events and refusals."""

from __future__ import annotations

import pytest

import claimdag

CODEX = claimdag.actor("codex-1")


def test_a_name_used_is_kept_and_shown_on_nodes_and_events(store: claimdag.Store) -> None:
    nid = store.upsert("parse the manifest header")
    gen = store.claim(nid, "name:codex-1")
    node = store.get(nid)
    assert (node.holder, node.holder_name) == (CODEX, "codex-1")
    assert node.to_dict()["holder_name"] == "codex-1"
    last = store.log(nid)[-1]
    assert (last.actor, last.actor_name, last.by_name) == (CODEX, "codex-1", None)
    store.complete(nid, gen=gen, actor="name:codex-1")
    done = store.get(nid)
    assert (done.completed_by_name, done.holder_name) == ("codex-1", None)
    assert [a["name"] for a in store.call("actor_list")] == ["codex-1"]


def test_actor_add_keeps_a_note_and_a_refusal_names_the_holder(store: claimdag.Store) -> None:
    added = store.call("actor_add", name="lead-ana", note="the lead")
    assert added == [{"id": claimdag.actor("lead-ana"), "name": "lead-ana",
                      "note": "the lead", "added_at": added[0]["added_at"]}]
    nid = store.upsert("parse the manifest header")
    store.claim(nid, "name:codex-1")
    with pytest.raises(claimdag.AlreadyClaimed) as e:
        store.claim(nid, "name:late")
    assert "(name:codex-1)" in str(e.value)
    names = [a["name"] for a in store.call("actor_list")]
    assert names == ["lead-ana", "codex-1"], "a refused call keeps no name"
    with pytest.raises(claimdag.InvalidInput, match="1-64 characters"):
        store.call("actor_add", name="two words")
