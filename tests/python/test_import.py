"""import_plan: a plan's nodes and links as one atomic, idempotent write, validated whole
with the messages of `claimdag import`."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import claimdag
from conftest import ME, files

PLAN: dict[str, Any] = {
    "nodes": [
        {"key": "tests", "summary": "test the parser", "deps": ["parser"], "estimate": 2},
        {"key": "epic", "summary": "manifest support", "kind": "epic"},
        {"key": "parser", "summary": "parse the manifest header", "parent": "epic",
         "role": "rust", "priority": 5, "labels": ["parser"], "resources": ["src/parse/"],
         "ref": "GH-12", "max_attempts": 3},
        {"key": "docs", "summary": "document the manifest", "soft_deps": ["tests"]},
    ]
}


def test_import_in_plan_order_with_every_field(store: claimdag.Store) -> None:
    out = store.import_plan(PLAN)
    assert [k for _, k in out] == ["tests", "epic", "parser", "docs"]
    ids = {k: i for i, k in out}
    assert len(set(ids.values())) == 4
    assert all(len(i) == 32 for i in ids.values())

    p = store.get(ids["parser"])
    assert (p.parent, p.role, p.priority, p.labels, p.resources, p.ref, p.max_attempts) == (
        ids["epic"], "rust", 5, ("parser",), ("src/parse/",), "GH-12", 3)
    assert store.get(ids["epic"]).kind == "epic"
    t = store.get(ids["tests"])
    assert (t.deps, t.estimate, t.ready) == ((ids["parser"],), 2, False)
    assert store.get(ids["docs"]).soft_deps == (ids["tests"],)
    # The same id upsert mints for the same identity.
    assert store.upsert("parse the manifest header", parent=ids["epic"]) == ids["parser"]


def test_reimport_is_idempotent(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    first = store.import_plan(PLAN)
    before = files(store_dir)
    events = len(store.log())
    assert store.import_plan(PLAN) == first
    assert store.import_plan(json.dumps(PLAN)) == first
    assert store.import_plan(json.dumps(PLAN).encode()) == first
    assert len(store.log()) == events
    assert files(store_dir) == before


def test_json_text_and_bytes(store: claimdag.Store) -> None:
    text = '{"nodes": [{"key": "a", "summary": "a"}, {"key": "b", "summary": "b", "deps": ["a"]}]}'
    out = store.import_plan(text)
    assert [k for _, k in out] == ["a", "b"]
    assert store.import_plan(bytearray(text.encode())) == out
    assert store.import_plan(text, workspace="other") != out
    assert [n.id for n in store.list(workspace="other")] == [
        i for i, _ in store.import_plan(text, workspace="other")]


def test_refers_to_existing_nodes(store: claimdag.Store) -> None:
    base = store.upsert("an existing node")
    out = store.import_plan({"nodes": [
        {"key": "child", "summary": "under it", "parent": base[:8], "deps": [base]},
    ]})
    n = store.get(out[0][0])
    assert (n.parent, n.deps) == (base, (base,))


def test_empty_plan(store: claimdag.Store) -> None:
    assert store.import_plan({"nodes": []}) == []
    assert store.list() == []


def _refused(store: claimdag.Store, store_dir: pathlib.Path, cls: type[claimdag.ClaimdagError],
             plan: Any) -> claimdag.ClaimdagError:
    before = files(store_dir)
    events = len(store.log())
    with pytest.raises(cls) as info:
        store.import_plan(plan)
    assert type(info.value) is cls
    assert files(store_dir) == before
    assert len(store.log()) == events
    return info.value


def test_cycle_is_refused_whole(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    store.upsert("an existing node")   # so the refusal has something to leave alone
    plan = {"nodes": [
        {"key": "fine", "summary": "would be created"},
        {"key": "egg", "summary": "egg", "deps": ["chicken"]},
        {"key": "chicken", "summary": "chicken", "deps": ["egg"]},
    ]}
    e = _refused(store, store_dir, claimdag.Cycle, plan)
    assert e.code == "cycle"
    assert '"egg"' in str(e) or '"chicken"' in str(e)
    assert len(store.list()) == 1

    e = _refused(store, store_dir, claimdag.Cycle,
                 {"nodes": [{"key": "self", "summary": "s", "deps": ["self"]}]})
    assert '"self"' in str(e)


def test_unknown_field_names_the_key(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    e = _refused(store, store_dir, claimdag.InvalidInput, {"nodes": [
        {"key": "fine", "summary": "fine"},
        {"key": "parser", "summary": "parse", "colour": "red"},
    ]})
    assert '"parser"' in str(e) and "colour" in str(e)
    assert isinstance(e, ValueError)

    e = _refused(store, store_dir, claimdag.InvalidInput, {"nodes": [], "extra": 1})
    assert '"extra"' in str(e)
    e = _refused(store, store_dir, claimdag.InvalidInput,
                 {"nodes": [{"summary": "no key"}]})
    assert "#1" in str(e)
    assert store.list() == []


@pytest.mark.parametrize("plan,words", [
    ('{"nodes": [', "not valid JSON"),
    ("[]", "JSON object"),
    ({"nodes": {}}, '"nodes" array'),
    ({"nodes": [{"key": "a", "summary": "a"}, {"key": "a", "summary": "b"}]}, "twice"),
    ({"nodes": [{"key": "a", "summary": "a", "estimate": 0}]}, '"a"'),
    ({"nodes": [{"key": "a", "summary": "a", "priority": "high"}]}, '"a"'),
])
def test_malformed_plans(store: claimdag.Store, store_dir: pathlib.Path, plan: Any,
                         words: str) -> None:
    e = _refused(store, store_dir, claimdag.InvalidInput, plan)
    assert words in str(e)


def test_unknown_reference(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    e = _refused(store, store_dir, claimdag.NotFound,
                 {"nodes": [{"key": "a", "summary": "a", "deps": ["nowhere"]}]})
    assert '"a"' in str(e) and "nowhere" in str(e)


def test_claimed_node_cannot_gain_deps(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    [(a, _)] = store.import_plan({"nodes": [{"key": "a", "summary": "a"}]})
    store.claim(a, ME)
    _refused(store, store_dir, claimdag.AlreadyClaimed, {"nodes": [
        {"key": "b", "summary": "b"},
        {"key": "a", "summary": "a", "deps": ["b"]},
    ]})


@pytest.mark.parametrize("plan", [None, 3, ["nodes"], ("nodes",)])
def test_wrong_types(store: claimdag.Store, plan: Any) -> None:
    with pytest.raises(TypeError):
        store.import_plan(plan)


def test_values_that_are_not_json(store: claimdag.Store) -> None:
    with pytest.raises(TypeError):
        store.import_plan({"nodes": [{"key": "a", "summary": "a", "labels": {"x"}}]})
    with pytest.raises(TypeError):
        store.import_plan({"nodes": [{1: "a"}]})
    with pytest.raises(claimdag.InvalidInput):
        store.import_plan({"nodes": [{"key": "a", "summary": "a", "priority": float("nan")}]})
    # Tuples are lists, as json.dumps has them.
    out = store.import_plan({"nodes": ({"key": "a", "summary": "a", "labels": ("x", "y")},)})
    assert store.get(out[0][0]).labels == ("x", "y")
