"""The installed module is a shipped build: the crash points and the compaction threshold
the Rust tests use are not compiled into it, so their variables change nothing."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

WRITE_THREE = """
import sys, claimdag
s = claimdag.Store(sys.argv[1])
for i in range(3):
    s.upsert(f"node {i}")
"""


def test_the_module_ignores_the_test_hooks(tmp_path: pathlib.Path) -> None:
    d = tmp_path / "claims"
    env = dict(
        os.environ,
        CLAIMDAG_CRASH_AT="before-append",
        CLAIMDAG_COMPACT_MIN_BYTES="1",
        CLAIMDAG_SYNC_FAIL_AFTER="0",
    )
    out = subprocess.run(
        [sys.executable, "-c", WRITE_THREE, str(d)], env=env, capture_output=True, timeout=60
    )
    assert out.returncode == 0, (out.returncode, out.stderr)
    import claimdag

    assert len(claimdag.Store(d).list()) == 3
    # A threshold of one byte, if it were honoured, would have compacted the journal away.
    assert (d / "journal").stat().st_size > 100
