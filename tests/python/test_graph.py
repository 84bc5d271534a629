"""graph: the workspace's DAG as Graphviz dot, Mermaid or JSON text."""

from __future__ import annotations

import pytest

import claimdag
from conftest import ME


def test_dot_and_mermaid(store: claimdag.Store) -> None:
    a = store.upsert("build the parser")
    b = store.upsert("test the parser")
    store.link(a, b)
    dot = store.graph()
    assert dot == store.graph(format="dot")
    assert dot.startswith("digraph claimdag {") and dot.rstrip().endswith("}")
    assert f"n{a[:12]} -> n{b[:12]}" in dot
    assert "build the parser" in dot

    mermaid = store.graph("mermaid")
    assert mermaid.startswith("flowchart LR")
    assert a[:12] in mermaid and b[:12] in mermaid and "test the parser" in mermaid


def test_all_and_workspace(store: claimdag.Store) -> None:
    a = store.upsert("finished")
    gen = store.claim(a, ME)
    store.complete(a, gen=gen)
    assert a[:8] not in store.graph()
    assert a[:8] in store.graph(all=True)
    assert a[:8] in store.graph("mermaid", True)
    elsewhere = store.upsert("elsewhere", workspace="other")
    assert elsewhere[:8] not in store.graph(all=True)
    assert elsewhere[:8] in store.graph(workspace="other")


def test_empty_store_and_bad_format(store: claimdag.Store) -> None:
    assert store.graph().startswith("digraph")
    with pytest.raises(claimdag.InvalidInput) as e:
        store.graph(format="svg")
    assert "dot, mermaid or json" in str(e.value)
