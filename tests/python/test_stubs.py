"""The hand-written stubs match the native module, and type-check a client."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def _mypy(cache: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Run away from the source tree so the installed package is the one checked, with the
    # cache out of the work tree.
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=HERE / "typed",
        env=dict(os.environ, MYPY_CACHE_DIR=str(cache)),
        timeout=600,
    )


def test_stubtest(tmp_path: pathlib.Path) -> None:
    out = _mypy(tmp_path, "mypy.stubtest", "claimdag")
    assert out.returncode == 0, out.stdout + out.stderr


def test_stubs_type_check_a_client(tmp_path: pathlib.Path) -> None:
    out = _mypy(tmp_path, "mypy", "--strict", "client.py")
    assert out.returncode == 0, out.stdout + out.stderr
