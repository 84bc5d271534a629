"""Shared fixtures: a fresh store directory per test, and actor ids."""

from __future__ import annotations

import pathlib
import shutil
import sys

import pytest

import claimdag


def actor(n: int) -> str:
    """The actor id `printf '%032x' n` gives."""
    return f"{n:032x}"


ME = actor(7)
YOU = actor(8)


@pytest.fixture
def store_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "claims"


@pytest.fixture
def store(store_dir: pathlib.Path) -> claimdag.Store:
    return claimdag.Store(store_dir)


def files(directory: pathlib.Path) -> dict[str, bytes]:
    """Every file of a store directory with its bytes: equal before and after a call that
    wrote nothing (empty when the directory does not exist yet)."""
    if not directory.exists():
        return {}
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def command() -> str:
    """The native `claimdag` command the wheel installed: beside the interpreter of the
    environment it was installed in."""
    beside = pathlib.Path(sys.executable).parent / "claimdag"
    found = str(beside) if beside.exists() else shutil.which("claimdag")
    assert found, "the claimdag command is installed with the package"
    return found
