"""The stubs match the native module (mypy.stubtest), type-check the typed clients under
mypy --strict and pyright (strict), and are tight enough that each line of typed/rejected.py
marked `# rejected: <reason>` is refused by both, and no other line. Their closed sets and
TypedDicts are held to what the module really answers. The stub of the exception classes is
generated from them (CLAIMDAG_BLESS=1 rewrites it)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import time
import typing
from typing import Any, Dict, Iterable, List, Mapping, Set, Tuple

import pytest

import claimdag
import claimdag.types
import claimdag._claimdag

HERE = pathlib.Path(__file__).parent
TYPED = HERE / "typed"
ROOT = HERE.parents[1]
#: The files that must type-check clean: the typed client and the examples.
GOOD = [TYPED / "client.py", *sorted((ROOT / "examples" / "python").glob("*.py"))]
#: The file whose marked lines must be refused.
REJECTED = TYPED / "rejected.py"
#: The stubs of the installed package (the ones the type checkers read).
STUB = pathlib.Path(claimdag._claimdag.__file__).parent / "_claimdag.pyi"


def _run(cache: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Run away from the source tree so the installed package is the one checked, with the
    # cache out of the work tree.
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=TYPED,
        env=dict(os.environ, MYPY_CACHE_DIR=str(cache), PYRIGHT_PYTHON_IGNORE_WARNINGS="1"),
        timeout=600,
    )


def _mypy(cache: pathlib.Path, *files: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return _run(cache, "mypy", "--strict", "--no-error-summary", *map(str, files))


def _pyright(cache: pathlib.Path, *files: pathlib.Path) -> Dict[str, Any]:
    """pyright's JSON report on `files`, strict as typed/pyrightconfig.json says, with the
    packages of this interpreter. pyright comes from PyPI (`pyright[nodejs]`); its wheel
    carries pyright itself and the nodejs extra a node, so nothing is fetched."""
    out = _run(cache, "pyright", "--outputjson", "--pythonpath", sys.executable,
               *map(str, files))
    try:
        report: Dict[str, Any] = json.loads(out.stdout)
    except ValueError:
        pytest.fail(f"pyright gave no JSON report (exit {out.returncode}; the test tools "
                    f"need pip install 'pyright[nodejs]'):\n{out.stdout}{out.stderr}")
    return report


def _pyright_errors(report: Mapping[str, Any]) -> List[Tuple[str, int, str]]:
    """(file name, line, message) of every error in a pyright report."""
    return [
        (pathlib.Path(d["file"]).name, d["range"]["start"]["line"] + 1, d["message"])
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]


def _marked_lines(path: pathlib.Path) -> Set[int]:
    """The lines of `path` that end in `# rejected: <reason>`."""
    return {
        i
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"(?<!`)#\s*rejected:\s*\S", line)
    }


def test_stubtest(tmp_path: pathlib.Path) -> None:
    allow = TYPED / "stubtest-allowlist.txt"
    out = _run(tmp_path, "mypy.stubtest", "claimdag", "--allowlist", str(allow))
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_accepts_the_client_and_the_examples(tmp_path: pathlib.Path) -> None:
    out = _mypy(tmp_path, *GOOD)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_accepts_the_package(tmp_path: pathlib.Path) -> None:
    out = _run(tmp_path, "mypy", "--strict", "-p", "claimdag")
    assert out.returncode == 0, out.stdout + out.stderr


def test_pyright_strict_accepts_the_client_and_the_examples(tmp_path: pathlib.Path) -> None:
    report = _pyright(tmp_path, *GOOD)
    assert report["summary"]["filesAnalyzed"] == len(GOOD), report["summary"]
    assert _pyright_errors(report) == []


def test_pyright_strict_accepts_the_package(tmp_path: pathlib.Path) -> None:
    package = pathlib.Path(claimdag.__file__).parent
    names = ("__init__.py", "aio.py", "types.py", "_claimdag.pyi", "exceptions.pyi")
    files = [package / n for n in names]
    assert _pyright_errors(_pyright(tmp_path, *files)) == []


def test_mypy_rejects_each_marked_line(tmp_path: pathlib.Path) -> None:
    out = _mypy(tmp_path, REJECTED)
    assert out.returncode == 1, out.stdout + out.stderr
    errors = re.findall(r"^rejected\.py:(\d+): error: (.*)$", out.stdout, flags=re.M)
    assert errors, out.stdout + out.stderr
    lines = {int(line) for line, _ in errors}
    marked = _marked_lines(REJECTED)
    assert lines == marked, (
        f"refused but not marked: {sorted(lines - marked)}; "
        f"marked but accepted: {sorted(marked - lines)}\n{out.stdout}"
    )


def test_pyright_rejects_each_marked_line(tmp_path: pathlib.Path) -> None:
    errors = _pyright_errors(_pyright(tmp_path, REJECTED))
    assert {name for name, _, _ in errors} <= {REJECTED.name}, errors
    lines = {line for _, line, _ in errors}
    marked = _marked_lines(REJECTED)
    assert lines == marked, (
        f"refused but not marked: {sorted(lines - marked)}; "
        f"marked but accepted: {sorted(marked - lines)}\n"
        + "\n".join(f"{line}: {message}" for _, line, message in errors)
    )


# -- The stubs' closed sets and TypedDicts against what the module answers -----------------


def _literal(name: str) -> List[str]:
    """The words of the `Literal` type `name` of claimdag.types, in order."""
    return list(typing.get_args(getattr(claimdag.types, name.lstrip("_"))))


def _typed_dict(name: str) -> Tuple[Set[str], Set[str]]:
    """The required and the optional keys of the TypedDict `name` of claimdag.types."""
    cls = getattr(claimdag.types, name.lstrip("_"))
    return set(cls.__required_keys__), set(cls.__optional_keys__)


def _fits(name: str, dicts: Iterable[Mapping[str, Any]]) -> None:
    """Every dict has the required keys of TypedDict `name` and no key it lacks; together
    they show every key it declares."""
    required, optional = _typed_dict(name)
    seen: Set[str] = set()
    for d in dicts:
        assert required <= set(d) <= required | optional, (name, sorted(d))
        seen |= set(d)
    assert seen == required | optional, (name, sorted((required | optional) - seen))


def test_error_codes_are_the_table() -> None:
    assert _literal("_ErrorName") == [c[0] for c in claimdag._claimdag.CODES]
    assert _literal("_ErrorCode") == [c[1] for c in claimdag._claimdag.CODES]


def test_words_are_the_ones_the_store_takes(tmp_path: pathlib.Path) -> None:
    store = claimdag.Store(tmp_path / "claims")
    with pytest.raises(claimdag.InvalidInput) as e:
        store.list(status="nope")  # type: ignore[arg-type]
    listed = re.search(r"use one of (.*)$", str(e.value))
    assert listed is not None, e.value
    assert sorted(listed.group(1).split(", ")) == sorted(_literal("_ListStatus"))
    assert set(_literal("_Status")) <= set(_literal("_DisplayWord"))
    assert set(_literal("_Finished")) <= set(_literal("_Status"))

    with pytest.raises(claimdag.InvalidInput) as e:
        store.call("nope")  # type: ignore[arg-type]
    verbs = re.search(r"the verbs are (.*)$", str(e.value))
    assert verbs is not None, e.value
    names = verbs.group(1).split(", ")
    assert sorted(_literal("_Verb")) == sorted(
        set(names) | {n.replace("_", "-") for n in names}
    )
    for word in _literal("_GraphFormat"):
        store.graph(format=word)  # type: ignore[arg-type]

    with pytest.raises(claimdag.InvalidInput) as e:
        store.lease_next(claimdag.actor("w1"), on_error="nope")  # type: ignore[arg-type]
    words = str(e.value).split(", got")[0]
    assert re.findall(r'"(\w+)"', words) == _literal("_OnError")


def test_event_verbs_are_the_documented_ones() -> None:
    doc = (ROOT / "docs" / "files.md").read_text()
    sentence = re.search(r"lines: `\{\"seq\".*?Verbs: (.*?)\.\n", doc, flags=re.S)
    assert sentence is not None
    verbs = re.sub(r"\([^)]*\)", "", sentence.group(1))
    assert set(re.findall(r"`(\w+)`", verbs)) == set(_literal("_EventVerb"))


def test_dicts_are_the_typed_dicts(tmp_path: pathlib.Path) -> None:
    store = claimdag.Store(tmp_path / "claims")
    me = claimdag.actor("w1")
    store.config(max_held=0)
    store.call("actor_add", name="w1")  # events name their actors
    store.call("actor_add", name="lead")
    a = store.upsert("a", labels=["x"])
    assert store.upsert("a", labels=["y"]) == a
    b = store.upsert("b")
    store.link(a, b)
    store.link(a, b, soft=True)
    store.unlink(a, b)
    store.link(a, b)
    gen = store.claim(a, me)
    resumed = store.claim_next(me, resume=True, details=True)
    assert resumed is not None and resumed.resumed
    assert store.cancel(a, reason="stop", actor=me)
    asked = store.get(a)
    assert asked.cancel_requested is not None
    gen = store.acting_as(claimdag.actor("lead")).release(a, me, gen)
    gen = store.claim(a, me, gen=gen, ttl=60)
    assert store.reclaim(lease=0) == [(a, gen + 1)]
    grant = store.claim(a, me, details=True)
    store.renew(a, me, gen=grant.generation, progress="half")
    store.complete(a, grant.generation, output={"rows": 1}, note="ok")
    picks = store.ready()
    took = store.claim(b, me, details=True)
    assert took.inputs == {a: {"rows": 1}}
    store.complete(b, took.generation, status="failed")
    store.reopen(b)
    assert not store.cancel(b)
    assert store.archive(b) == 1
    assert store.unarchive(b) in _literal("_Finished")
    expiring = store.upsert("c")
    store.claim(expiring, me, ttl=0.001)
    time.sleep(0.01)
    store.upsert("d")  # a write: hands the expired claim back
    for approve in (True, False):
        gate = store.upsert(f"gate {approve}", kind="gate")
        decide = store.approve if approve else store.reject
        decide(gate, 1, note="decided", actor=me)
    parked = store.upsert("parked", max_attempts=1)
    store.retry(parked, store.release(parked, me, store.claim(parked, me)))
    epic = store.upsert("epic", kind="epic")
    store.cancel(store.upsert("child", parent=epic))  # the epic settles
    store.upsert("late", deadline="2020-01-01T00:00:00Z")  # overdue at once
    spend = store.upsert("spend", budget={"tokens": 10, "cost": "0.5"})
    took = store.claim(spend, me, details=True)
    store.renew(spend, me, gen=took.generation, usage="tokens=11,cost=0.25")
    nodes = store.list(terminal=True)

    _fits("_NodeDict", [n.to_dict() for n in nodes] + [asked.to_dict()])
    events = store.log()
    _fits("_EventDict", [e.to_dict() for e in events])
    assert {e.verb for e in events} == set(_literal("_EventVerb"))
    assert {n.status for n in nodes} | {asked.status} <= set(_literal("_Status"))
    assert {n.display for n in nodes} <= set(_literal("_DisplayWord"))
    _fits("_PickDict", [p.to_dict() for p in picks])
    _fits("_ReportDict", [store.check().to_dict()])
    _fits("_SettingsDict", [store.config().to_dict()])
    assert asked.cancel_requested is not None
    _fits("_CancelRequestDict", [asked.cancel_requested.to_dict()])
    _fits("_GrantDict", [grant.to_dict(), resumed.to_dict()])


# -- The generated stub of the exception classes -------------------------------------------


def _docstring(obj: object, indent: str) -> List[str]:
    """`obj`'s docstring as stub lines, each at most 100 characters."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    # A docstring of several paragraphs ends with its quotes on a line of their own.
    end = "\n" if "\n" in doc else ""
    lines: List[str] = []
    for line in f'"""{doc}{end}"""'.splitlines():
        if not line.strip():
            lines.append("")
            continue
        lead = indent + line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line.strip(), width=100, initial_indent=lead,
                               subsequent_indent=lead, break_on_hyphens=False)
    return lines


def _exceptions_stub() -> str:
    """claimdag/exceptions.pyi as the classes built from the core's table make it."""
    from claimdag.exceptions import BY_CODE, ClaimdagError

    classes = list(BY_CODE.values())
    lines = [
        '"""Type stubs of claimdag.exceptions, whose classes are built at import from the native',
        "module's table of codes. Generated by tests/python/test_stubs.py (CLAIMDAG_BLESS=1",
        'rewrites it); mypy.stubtest holds it to the runtime classes."""',
        "",
        "from typing import ClassVar, Dict, List, Optional, Type, TypedDict",
        "",
        "from claimdag.types import ErrorCode as _ErrorCode",
        "",
        "__all__ = [",
        '    "ClaimdagError",',
        *(f'    "{cls.__name__}",' for cls in classes),
        '    "BY_CODE",',
        "]",
        "",
        "class _ErrorBodyRequired(TypedDict):",
        "    code: _ErrorCode",
        "    message: str",
        "",
        "class _ErrorBody(_ErrorBodyRequired, total=False):",
        '    """``ClaimdagError.body``: the error as every front door reports it in JSON; a',
        '    context key only when the error names it."""',
        "",
        "    node: str",
        "    holder: str",
        "    generation: int",
        "    held: List[str]",
        "    path: str",
        "",
        "class ClaimdagError(Exception):",
        *_docstring(ClaimdagError, "    "),
        "",
        "    code: ClassVar[_ErrorCode]",
        "    node: Optional[str]",
        "    holder: Optional[str]",
        "    generation: Optional[int]",
        "    path: Optional[str]",
        "    held: Optional[List[str]]",
        "    body: Optional[_ErrorBody]",
        "",
    ]
    for cls in classes:
        bases = ", ".join(b.__name__ for b in cls.__bases__)
        lines.append(f"class {cls.__name__}({bases}):")
        lines += _docstring(cls, "    ")
        lines.append("")
    lines += [
        "#: The class of each code, as the native module raises them.",
        "BY_CODE: Dict[str, Type[ClaimdagError]]",
        "",
    ]
    return "\n".join(lines)


def test_exceptions_stub_is_generated() -> None:
    stub = HERE.parents[1] / "python" / "claimdag" / "exceptions.pyi"
    want = _exceptions_stub()
    if os.environ.get("CLAIMDAG_BLESS") == "1":
        stub.write_text(want)
        return
    assert stub.read_text() == want, (
        "python/claimdag/exceptions.pyi is out of date with the table of codes; regenerate "
        "it with: CLAIMDAG_BLESS=1 pytest tests/python/test_stubs.py"
    )
