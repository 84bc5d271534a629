"""docs/python.md: its Python blocks run as written, in order, on a fresh store, and it
documents every public name of the package (so the page keeps up as the API grows)."""

from __future__ import annotations

import importlib.util
import inspect
import os
import pathlib
import re
import sysconfig

import pytest

import claimdag
import claimdag.aio
import claimdag.exceptions

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"

#: The classes whose public methods and properties each need an entry.
CLASSES = [
    claimdag.Store,
    claimdag.Lease,
    claimdag.LeaseNext,
    claimdag.Watch,
    claimdag.Node,
    claimdag.Event,
    claimdag.Pick,
    claimdag.Report,
    claimdag.Settings,
    claimdag.Grant,
    claimdag.CancelRequest,
    claimdag.ClaimdagError,
    claimdag.aio.AsyncLease,
    claimdag.aio.AsyncLeaseNext,
]


def text() -> str:
    return DOC.read_text(encoding="utf-8")


def python_blocks() -> list[str]:
    """The ```python blocks, each padded with the blank lines before it, so that a
    traceback names the line of docs/python.md."""
    doc = text()
    return [
        "\n" * doc.count("\n", 0, m.start(1)) + m.group(1)
        for m in re.finditer(r"^```python\n(.*?)^```", doc, flags=re.S | re.M)
    ]


def public_names() -> set[str]:
    """Every public name of the package: the modules' `__all__` and what the classes
    define themselves (not what they inherit from `object` or `Exception`)."""
    names = set(claimdag.__all__) | set(claimdag.aio.__all__)
    names |= set(claimdag.exceptions.__all__)
    for cls in CLASSES:
        inherited = set(dir(Exception)) if issubclass(cls, BaseException) else set(dir(object))
        names |= {n for n in dir(cls) if not n.startswith("_") and n not in inherited}
    return names


def words(snippets: list[str]) -> set[str]:
    return {w for s in snippets for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", s)}


def test_doc_examples_run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAIMDAG_DIR", str(tmp_path / "claims"))
    monkeypatch.delenv("CLAIMDAG_WORKSPACE", raising=False)
    monkeypatch.delenv("CLAIMDAG_ACTOR", raising=False)
    # As in an activated environment: the `claimdag` command the package installed is on
    # PATH (the MCP example starts it by name).
    scripts = sysconfig.get_path("scripts")
    monkeypatch.setenv("PATH", os.pathsep.join([scripts, os.environ.get("PATH", "")]))
    has_mcp = importlib.util.find_spec("mcp") is not None
    blocks = python_blocks()
    assert len(blocks) >= 20
    namespace: dict[str, object] = {"__name__": "docs"}
    for block in blocks:
        if not has_mcp and re.search(r"^from mcp\b|^import mcp\b", block, flags=re.M):
            continue  # the MCP SDK example needs the `mcp` package
        exec(compile(block, str(DOC), "exec"), namespace)
    store = namespace["store"]
    assert isinstance(store, claimdag.Store)
    # The tour's two nodes were finished (the worker loop took the second), no claim is
    # left behind, and the store is sound.
    tour = [namespace["a"], namespace["b"]]
    assert [store.get(str(n)).status for n in tour] == ["done", "done"]
    assert [n.summary for n in store.list(status="claimed")] == []
    assert store.check().ok


def test_every_public_name_is_documented() -> None:
    """Each public name appears in inline code (`name`, `store.name(...)`) and in an
    example."""
    doc = text()
    fences = re.findall(r"^```[a-z]*\n(.*?)^```", doc, flags=re.S | re.M)
    prose = re.sub(r"^```[a-z]*\n.*?^```", "", doc, flags=re.S | re.M)
    inline = words(re.findall(r"`([^`\n]+)`", prose))
    examples = words(python_blocks())
    names = public_names()
    assert {"Store", "upsert", "claim_next", "AsyncLease", "StaleGeneration"} <= names
    undescribed = sorted(names - inline)
    assert undescribed == [], f"not described in docs/python.md: {undescribed}"
    unshown = sorted(names - examples)
    assert unshown == [], f"in no example of docs/python.md: {unshown}"


def test_every_store_method_has_its_signature() -> None:
    """Each public method of Store is described with its arguments: `name(` in the text."""
    doc = text()
    methods = [
        n
        for n, v in inspect.getmembers(claimdag.Store)
        if not n.startswith("_") and callable(v)
    ]
    assert len(methods) > 25
    missing = [m for m in methods if not re.search(rf"`(store\.)?{m}\(", doc)]
    assert missing == [], f"Store methods without `name(` in docs/python.md: {missing}"


def test_doc_lines_are_short() -> None:
    long = [i for i, line in enumerate(text().splitlines(), 1) if len(line) > 100]
    assert long == [], f"lines over 100 characters: {long}"


def test_doc_links_resolve() -> None:
    """Every `](#anchor)` names a heading of the page (as GitHub makes anchors, a repeated
    one getting -1, -2, ...), and every relative link a file beside it."""
    doc = text()
    prose = re.sub(r"^```[a-z]*\n.*?^```", "", doc, flags=re.S | re.M)
    anchors: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", prose, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n, unique = 0, slug
        while unique in anchors:
            n += 1
            unique = f"{slug}-{n}"
        anchors.add(unique)
    targets = re.findall(r"\]\(([^)\s]+)\)", prose)
    broken = [t for t in targets if t.startswith("#") and t[1:] not in anchors]
    assert broken == [], f"links to no heading of docs/python.md: {broken}"
    files = [t.split("#")[0] for t in targets if not t.startswith(("#", "http"))]
    missing = [f for f in files if not (DOC.parent / f).exists()]
    assert missing == [], f"links to no file: {missing}"
