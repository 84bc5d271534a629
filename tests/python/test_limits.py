"""Pools and rate limits through the Python module, on both backends: `pool_set` and
`config` with `rate.NAME` through `Store.call`, a full pool or window refused as
`ResourceConflict` (the same code as an overlap) with the store unchanged, and the slots
back at the hand-back."""

import pathlib

import pytest

import claimdag
from conftest import ME, YOU


@pytest.fixture(params=["embedded", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> claimdag.Store:
    if request.param == "embedded":
        return claimdag.Store(tmp_path / "claims")
    return claimdag.Store(request.getfixturevalue("pg_url"))


def test_a_pool_holds_its_slots_until_the_hand_back(any_store: claimdag.Store) -> None:
    s = any_store
    s.config(max_held=0)
    pools = s.call("pool_set", name="gpu", size="2")
    assert pools == [{"kind": "pool", "name": "gpu", "size": 2, "used": 0, "nodes": []}]
    big = s.upsert("big", resources=["pool:gpu*2"])
    small = s.upsert("small", resources=["pool:gpu"])
    gen = s.claim(big, ME)
    with pytest.raises(claimdag.ResourceConflict) as e:
        s.claim(small, YOU)
    assert "pool gpu has 2 slot(s), 2 held" in str(e.value)
    assert s.get(small).status == "todo"
    assert s.call("pool_list")[0]["nodes"] == [big]
    s.release(big, ME, gen)
    assert s.claim(small, YOU) == 2


def test_a_rate_refuses_past_its_window(any_store: claimdag.Store) -> None:
    s = any_store
    s.config(max_held=0)
    s.call("config", key="rate.llm", value="1/1h")
    first = s.upsert("first", resources=["rate:llm"])
    second = s.upsert("second", resources=["rate:llm"])
    s.complete(first, gen=s.claim(first, ME), status="done")
    with pytest.raises(claimdag.ResourceConflict) as e:
        s.claim(second, ME)
    assert "rate llm allows 1 per 1h" in str(e.value)
    assert s.call("rate_list")[0]["used"] == 1
    with pytest.raises(claimdag.ClaimdagError) as bad:
        s.call("config", key="rate.llm", value="0/0s")
    assert bad.value.code == "invalid_input"
