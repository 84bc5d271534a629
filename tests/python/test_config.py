"""config: the settings, each change one locked write of that setting alone."""

from __future__ import annotations

import datetime
import pathlib
import threading

import pytest

import claimdag
from conftest import files


def test_defaults_and_changes(store: claimdag.Store) -> None:
    s = store.config()
    assert (s.max_held, s.max_attempts) == (1, None)
    assert s.default_ttl_ms > 0
    s = store.config(default_ttl=90, max_held=0, max_attempts=4)
    assert (s.default_ttl_ms, s.max_held, s.max_attempts) == (90_000, 0, 4)
    assert store.config() == s
    assert store.config(default_ttl=datetime.timedelta(milliseconds=1500)).default_ttl_ms == 1500
    assert store.config(default_ttl=0.25).default_ttl_ms == 250
    assert store.config(max_attempts=None).max_attempts is None
    assert store.config().max_held == 0
    assert claimdag.Store(store.path).config() == store.config()


def test_one_event_per_change(store: claimdag.Store) -> None:
    store.config(max_held=2)
    assert [e.verb for e in store.log()] == ["config"]
    store.config(max_held=2)   # no change, no event
    assert [e.verb for e in store.log()] == ["config"]


def test_refused_changes_write_nothing(store: claimdag.Store, store_dir: pathlib.Path) -> None:
    store.config(max_held=3)
    before = files(store_dir)
    with pytest.raises(claimdag.InvalidInput):
        store.config(default_ttl=0, max_held=5, max_attempts=2)
    with pytest.raises(claimdag.InvalidInput) as e:   # now + default_ttl overflows the clock
        store.config(default_ttl=18_446_744_073_000_000, max_held=5)
    assert "default_ttl" in str(e.value)
    with pytest.raises(claimdag.InvalidInput):
        store.config(max_held=5, max_attempts=0)
    with pytest.raises(claimdag.InvalidInput):
        store.config(default_ttl=60, max_held=-1)
    with pytest.raises(TypeError):
        store.config(max_held=5, default_ttl="1h")
    with pytest.raises(TypeError):
        store.config(10)  # type: ignore[misc]
    assert files(store_dir) == before
    assert store.config().max_held == 3


def test_concurrent_changes_of_other_settings_are_kept(store: claimdag.Store) -> None:
    # Two threads (and two handles) change different settings at the same time: every
    # change is read and written under the lock, so the last value of each one stays.
    other = claimdag.Store(store.path)
    rounds = 40
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def held() -> None:
        try:
            barrier.wait()
            for i in range(2, rounds + 2):   # 1 is the default: no change, no event
                store.config(max_held=i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def ttl() -> None:
        try:
            barrier.wait()
            for i in range(1, rounds + 1):
                other.config(default_ttl=i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=held), threading.Thread(target=ttl)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    s = store.config()
    assert (s.max_held, s.default_ttl_ms) == (rounds + 1, rounds * 1000)
    assert len([e for e in store.log() if e.verb == "config"]) == 2 * rounds
