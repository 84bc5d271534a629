"""Shared fixtures: a fresh store directory per test, and actor ids."""

from __future__ import annotations

import itertools
import os
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


def cli() -> str:
    """The `claimdag` command the wheel installed (tests/python/run.sh sets $CLAIMDAG_CLI)."""
    path = os.environ.get("CLAIMDAG_CLI", "")
    assert path and pathlib.Path(path).exists(), (
        "CLAIMDAG_CLI is not set: tests/python/run.sh builds the command and sets it"
    )
    return path


_schemas = itertools.count()


@pytest.fixture
def pg_url() -> str:
    """A new store (schema) on the PostgreSQL server tests/python/run.sh started."""
    base = os.environ.get("CLAIMDAG_TEST_PG", "")
    assert base, "CLAIMDAG_TEST_PG is not set: tests/python/run.sh starts a PostgreSQL server"
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}schema=py_{os.getpid()}_{next(_schemas)}"


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
