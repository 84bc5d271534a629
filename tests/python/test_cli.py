"""The `claimdag` command installed with the package, on the same store as the module."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import claimdag
from conftest import ME, command


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [command(), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_console_script_drives_the_same_store(store_dir: pathlib.Path) -> None:
    d = str(store_dir)
    made = _run("--dir", d, "upsert", "--summary", "parse the manifest header")
    assert made.returncode == 0, made.stderr
    nid = made.stdout.strip()

    store = claimdag.Store(store_dir)
    assert store.get(nid).summary == "parse the manifest header"
    gen = store.claim(nid, ME)

    listed = _run("--dir", d, "list")
    assert listed.returncode == 0
    assert listed.stdout.split() == [nid[:8] + "...", "claimed", "task", f"gen={gen}",
                                     f"holder={ME}", "parse", "the", "manifest", "header"]

    shown = _run("--dir", d, "--json", "show", nid[:8])
    assert json.loads(shown.stdout) == store.get(nid).to_dict()

    done = _run("--dir", d, "complete", nid, "--status", "done", "--gen", str(gen))
    assert done.returncode == 0, done.stderr
    assert store.get(nid).status == "done"


def test_exit_codes_and_json_errors(store_dir: pathlib.Path) -> None:
    d = str(store_dir)
    missing = _run("--dir", d, "show", "f" * 32)
    assert missing.returncode == 3
    assert missing.stderr.startswith("error: ") and "not found" in missing.stderr

    nid = claimdag.Store(store_dir).upsert("a")
    claimdag.Store(store_dir).claim(nid, ME)
    stale = _run("--dir", d, "--json", "complete", nid, "--status", "done", "--gen", "1")
    assert stale.returncode == 5
    err = json.loads(stale.stderr)["error"]
    assert (err["code"], err["node"], err["generation"]) == ("stale_generation", nid, 2)

    assert _run("--dir", d, "next").returncode == 1
    assert _run("--dir", d, "no-such-verb").returncode == 2


def test_help_and_version() -> None:
    helped = _run("--help")
    assert helped.returncode == 0
    assert "Usage: claimdag" in helped.stdout
    version = _run("--version")
    assert version.returncode == 0 and claimdag.__version__ in version.stdout


def test_environment_chooses_the_store(store_dir: pathlib.Path) -> None:
    env = dict(os.environ, CLAIMDAG_DIR=str(store_dir), CLAIMDAG_WORKSPACE="ws1")
    nid = _run("upsert", "--summary", "from the environment", env=env).stdout.strip()
    n = claimdag.Store(store_dir, workspace="ws1").get(nid)
    assert n.workspace == "ws1"
    assert claimdag.Store(store_dir).list() == []
    assert [x.id for x in claimdag.Store(store_dir).list(workspace="ws1")] == [nid]


@pytest.mark.parametrize("argv0", ["-m"])
def test_python_dash_m(store_dir: pathlib.Path, argv0: str) -> None:
    out = subprocess.run(
        [sys.executable, argv0, "claimdag", "--dir", str(store_dir), "config"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "default_ttl 15m",
        "max_held 1",
        "max_attempts none",
        "retry_delay 0",
        "retry_delay_max 1h",
        "history_keep all",
        "deadline_action none",
    ]


def test_log_events_read_the_same_as_the_cli(store_dir: pathlib.Path) -> None:
    store = claimdag.Store(store_dir)
    store.import_plan({"nodes": [{"key": "a", "summary": "a"},
                                 {"key": "b", "summary": "b", "deps": ["a"]}]})
    (a, _), = [(n.id, n) for n in store.list() if n.summary == "a"]
    store.complete(a, gen=store.claim(a, ME))
    events = store.log()
    # One write (the import) recorded several events: each has its place in it.
    first = [e for e in events if e.seq == events[0].seq]
    assert [e.i for e in first] == list(range(len(first))) and len(first) >= 2
    cli = _run("--dir", str(store_dir), "--json", "log")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == [e.to_dict() for e in events]
