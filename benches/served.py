"""Starting and stopping `claimdag serve` for the benches that measure it (serve.py,
serve_streams.py, dashboard.py)."""

from __future__ import annotations

import pathlib
import re
import signal
import subprocess


def serve(cli: str, store: pathlib.Path) -> tuple[subprocess.Popen[str], int, str]:
    """`claimdag serve` on a free loopback port: the process, its port and its token."""
    proc = subprocess.Popen([cli, "--dir", str(store), "serve", "--listen", "127.0.0.1:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    port, token = 0, ""
    while not (port and token):
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"claimdag serve did not start (exit {proc.poll()})")
        if m := re.search(r"127\.0\.0\.1:(\d+)/", line):
            port = int(m.group(1))
        if m := re.search(r"the token in (.+)$", line.strip()):
            token = pathlib.Path(m.group(1)).read_text().strip()
    return proc, port, token


def stop(proc: subprocess.Popen[str]) -> None:
    """Ends the server as an operator would (SIGTERM) and waits for it."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
