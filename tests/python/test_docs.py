"""The Python blocks of docs/python.md run as written, in order, on a fresh store."""

from __future__ import annotations

import pathlib
import re

import pytest

import claimdag

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_doc_examples_run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAIMDAG_DIR", str(tmp_path / "claims"))
    monkeypatch.delenv("CLAIMDAG_WORKSPACE", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {"__name__": "docs"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    store = namespace["store"]
    assert isinstance(store, claimdag.Store)
    assert [n.status for n in store.list(terminal=True)][:2] == ["done", "done"]
