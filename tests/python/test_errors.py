"""Every exception class: its code, its place in the hierarchy, and each reachable one
raised for real with its context attributes."""

from __future__ import annotations

import pathlib

import pytest

import claimdag
from claimdag.exceptions import BY_CODE
from conftest import ME, YOU, actor

CODES = {
    "NotFound": "not_found",
    "AlreadyClaimed": "already_claimed",
    "AssigneeBusy": "assignee_busy",
    "NotReady": "not_ready",
    "AttemptsExhausted": "attempts_exhausted",
    "ResourceConflict": "resource_conflict",
    "NotClaimed": "not_claimed",
    "Terminal": "terminal",
    "StaleGeneration": "stale_generation",
    "NotHolder": "not_holder",
    "Cycle": "cycle",
    "InvalidInput": "invalid_input",
    "CorruptStore": "corrupt",
    "StoreIOError": "io",
    "InternalError": "internal",
}


@pytest.mark.parametrize("name,code", sorted(CODES.items()))
def test_class_and_code(name: str, code: str) -> None:
    cls = getattr(claimdag, name)
    assert issubclass(cls, claimdag.ClaimdagError)
    assert issubclass(cls, Exception)
    assert cls.code == code
    assert BY_CODE[code] is cls
    assert name in claimdag.__all__
    e = cls("message")
    assert (e.code, e.node, e.holder, e.generation, e.path) == (code, None, None, None, None)


def test_one_class_per_code() -> None:
    assert sorted(BY_CODE) == sorted(CODES.values())
    assert issubclass(claimdag.StoreIOError, OSError)
    assert issubclass(claimdag.InvalidInput, ValueError)


def test_classes_follow_the_core_table() -> None:
    # One class per row of the core's table, in its order, with its code and meaning.
    from claimdag._claimdag import CODES

    assert [code for _, code, _, _, _ in CODES] == list(BY_CODE)
    assert [value for _, _, value, _, _ in CODES] == list(range(1, len(CODES) + 1))
    for _, code, _, _, meaning in CODES:
        assert (BY_CODE[code].__doc__ or "").startswith(meaning)


def test_docs_table_matches_the_classes() -> None:
    # The table of docs/python.md: one row a class, in the order of the codes.
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
    lines = doc.read_text().splitlines()
    start = lines.index("| class | `.code` | raised when |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        rows.append((cells[0], cells[1]))
    assert rows == [(cls.__name__, code) for code, cls in BY_CODE.items()]


def _raises(cls: type[claimdag.ClaimdagError], call, *args, **kwargs):  # type: ignore[no-untyped-def]
    with pytest.raises(cls) as info:
        call(*args, **kwargs)
    assert type(info.value) is cls
    assert info.value.code == CODES[cls.__name__]
    return info.value


def test_not_found(store: claimdag.Store) -> None:
    missing = "f" * 32
    e = _raises(claimdag.NotFound, store.get, missing)
    assert e.node == missing and "not found" in str(e)
    e = _raises(claimdag.NotFound, store.get, "deadbeef")
    assert "not found" in str(e)
    a = store.upsert("a")
    _raises(claimdag.NotFound, store.link, a, missing)
    _raises(claimdag.NotFound, store.upsert, "b", parent=missing)


def test_already_claimed(store: claimdag.Store) -> None:
    a = store.upsert("a")
    gen = store.claim(a, ME)
    e = _raises(claimdag.AlreadyClaimed, store.claim, a, ME)
    assert (e.node, e.holder, e.generation) == (a, ME, gen)
    assert "already claimed" in str(e)


def test_assignee_busy(store: claimdag.Store) -> None:
    a, b = store.upsert("a"), store.upsert("b")
    store.claim(a, ME)
    e = _raises(claimdag.AssigneeBusy, store.claim, b, ME)
    assert e.node == b and "already holds" in str(e)
    store.config(max_held=0)
    assert store.claim(b, ME) == 2


def test_not_ready(store: claimdag.Store) -> None:
    a, b = store.upsert("a"), store.upsert("b")
    store.link(a, b)
    e = _raises(claimdag.NotReady, store.claim, b, ME)
    assert e.node == b and "not ready" in str(e)


def test_attempts_exhausted(store: claimdag.Store) -> None:
    a = store.upsert("a", max_attempts=1)
    store.release(a, ME, store.claim(a, ME))
    e = _raises(claimdag.AttemptsExhausted, store.claim, a, ME)
    assert e.node == a and "attempts exhausted" in str(e)


def test_resource_conflict(store: claimdag.Store) -> None:
    a = store.upsert("a", resources=["src/parser/"])
    b = store.upsert("b", resources=["src/parser/lexer.rs"])
    gen = store.claim(a, ME)
    e = _raises(claimdag.ResourceConflict, store.claim, b, YOU)
    assert (e.node, e.holder, e.generation) == (b, ME, gen)
    assert "resource" in str(e)


def test_not_claimed(store: claimdag.Store) -> None:
    a = store.upsert("a")
    e = _raises(claimdag.NotClaimed, store.complete, a, gen=1, status="done")
    assert e.node == a and "not claimed" in str(e)


def test_terminal(store: claimdag.Store) -> None:
    a = store.upsert("a")
    store.complete(a, gen=1, status="cancelled")
    e = _raises(claimdag.Terminal, store.complete, a, gen=1, status="done")
    assert e.node == a and "terminal" in str(e)


def test_stale_generation(store: claimdag.Store) -> None:
    a = store.upsert("a")
    gen = store.claim(a, ME)
    e = _raises(claimdag.StaleGeneration, store.complete, a, gen=gen - 1)
    assert (e.node, e.generation) == (a, gen)
    assert "stale generation" in str(e)


def test_not_holder(store: claimdag.Store) -> None:
    a = store.upsert("a")
    gen = store.claim(a, ME)
    e = _raises(claimdag.NotHolder, store.complete, a, gen=gen, actor=YOU)
    assert (e.node, e.holder, e.generation) == (a, ME, gen)
    assert "not the holder" in str(e)
    _raises(claimdag.NotHolder, store.renew, a, YOU)


def test_cycle(store: claimdag.Store) -> None:
    a, b = store.upsert("a"), store.upsert("b")
    store.link(a, b)
    e = _raises(claimdag.Cycle, store.link, b, a)
    assert "cycle" in str(e)
    _raises(claimdag.Cycle, store.link, a, a)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.claim(s.upsert("a"), "not-an-actor"),
        lambda s: s.upsert("   "),
        lambda s: s.upsert("a", kind="Not A Kind"),
        lambda s: s.upsert("a", estimate=0),
        lambda s: s.claim(s.upsert("a"), actor(1), ttl=-1),
        lambda s: s.claim(s.upsert("a"), actor(1), ttl=float("nan")),
        lambda s: s.claim(s.upsert("a"), actor(1), ttl=0),
        lambda s: s.claim(s.upsert("a"), actor(1), gen=-1),
        lambda s: s.complete(s.upsert("a"), gen=1, status="finished"),
        lambda s: s.list(status="sleeping"),
        lambda s: s.upsert("a", workspace="no spaces"),
        lambda s: s.config(default_ttl=10**30),
    ],
)
def test_invalid_input(store: claimdag.Store, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(claimdag.InvalidInput) as info:
        call(store)
    assert info.value.code == "invalid_input"
    assert isinstance(info.value, ValueError)


def test_wrong_types_are_type_errors(store: claimdag.Store) -> None:
    a = store.upsert("a")
    with pytest.raises(TypeError):
        store.claim(a, ME, ttl="10m")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.claim(a, ME, ttl=True)


def test_corrupt_store(store_dir: pathlib.Path) -> None:
    claimdag.Store(store_dir).upsert("a")
    snapshot = store_dir / "snapshot.json"
    snapshot.write_text("{ this is not json")
    fresh = claimdag.Store(store_dir)
    e = _raises(claimdag.CorruptStore, fresh.list)
    assert e.path is not None and e.path.endswith("snapshot.json")
    assert "corrupt" in str(e)
    _raises(claimdag.CorruptStore, fresh.check)
    assert snapshot.read_text() == "{ this is not json", "a damaged file is left as it was"


def test_store_io_error(tmp_path: pathlib.Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    store = claimdag.Store(not_a_dir / "claims")
    e = _raises(claimdag.StoreIOError, store.upsert, "a")
    assert isinstance(e, OSError)
    assert e.errno is not None and e.path is not None and e.filename == e.path
    assert str(not_a_dir) in e.path
    with pytest.raises(OSError):
        store.upsert("a")


def test_errors_can_be_caught_by_the_base(store: claimdag.Store) -> None:
    with pytest.raises(claimdag.ClaimdagError):
        store.get("0" * 32)


GEN_CALLS = {
    "claim": lambda s, a, g: s.claim(a, YOU, gen=g),
    "renew": lambda s, a, g: s.renew(a, ME, gen=g),
    "release": lambda s, a, g: s.release(a, ME, g),
    "complete": lambda s, a, g: s.complete(a, gen=g),
    "reopen": lambda s, a, g: s.reopen(a, gen=g),
}


@pytest.mark.parametrize("verb", sorted(GEN_CALLS))
@pytest.mark.parametrize("gen", [2**64, 10**30, -1])
def test_generations_out_of_range_are_invalid_input_naming_gen(
    store: claimdag.Store, verb: str, gen: int
) -> None:
    a = store.upsert("a")
    store.claim(a, ME)
    e = _raises(claimdag.InvalidInput, GEN_CALLS[verb], store, a, gen)
    assert "gen" in str(e)
    assert store.get(a).generation == 2 and store.get(a).holder == ME


@pytest.mark.parametrize("verb", sorted(GEN_CALLS))
@pytest.mark.parametrize("gen", [2**63, 2**64 - 1])
def test_large_valid_generations_are_stale(store: claimdag.Store, verb: str, gen: int) -> None:
    a = store.upsert("a")
    store.claim(a, ME)
    if verb == "reopen":
        store.complete(a, gen=2)
    e = _raises(claimdag.StaleGeneration, GEN_CALLS[verb], store, a, gen)
    assert e.generation == 2


def test_a_bool_is_not_an_integer(store: claimdag.Store) -> None:
    a = store.upsert("a")
    with pytest.raises(TypeError, match="gen"):
        store.claim(a, ME, gen=True)
    assert store.get(a).status == "todo", "gen=True was not taken as generation 1"
    with pytest.raises(TypeError, match="priority"):
        store.upsert("b", priority=False)
    with pytest.raises(TypeError, match="max_held"):
        store.config(max_held=True)
    with pytest.raises(TypeError, match="count"):
        store.claim_next_many(ME, count=True)  # type: ignore[arg-type]
    assert store.get(a).status == "todo", "count=True was taken as 1"
    with pytest.raises(TypeError, match="since"):
        store.log(since=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="since"):
        store.watch(since=False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda s: s.upsert("a", priority=2**63), "priority"),
        (lambda s: s.upsert("a", estimate=2**64), "estimate"),
        (lambda s: s.upsert("a", max_attempts=2**32), "max_attempts"),
        (lambda s: s.config(max_held=2**64), "max_held"),
        (lambda s: s.config(max_attempts=2**40), "max_attempts"),
        (lambda s: s.claim_next_many(ME, count=-1), "count"),
        (lambda s: s.claim_next_many(ME, count=2**40), "count"),
        (lambda s: s.log(since=-1), "since"),
        (lambda s: s.log(since=2**64), "since"),
        (lambda s: s.watch(since=-5), "since"),
    ],
)
def test_other_integers_out_of_range_are_invalid_input(
    store: claimdag.Store, call, name: str  # type: ignore[no-untyped-def]
) -> None:
    with pytest.raises(claimdag.InvalidInput, match=name):
        call(store)
    assert store.list() == []
    assert store.upsert("z", priority=-(2**63)) and store.upsert("y", priority=2**63 - 1)
