"""The Python module on a PostgreSQL store: the same walkthrough, errors and leases as on a
directory, and the CLI on the same store. tests/python/run.sh starts the server and sets
$CLAIMDAG_TEST_PG."""

from __future__ import annotations

import os
import subprocess
import pathlib

import pytest

import claimdag
from conftest import ME, YOU, command

def test_walkthrough_on_postgres(pg_url: str) -> None:
    store = claimdag.Store(pg_url)
    assert store.path.startswith("postgres://") and "schema=py_" in store.path
    assert store.list() == []
    a = store.upsert("parse the manifest header")
    b = store.upsert("reject a manifest with no header", parent=a)
    store.link(a, b)
    gen = store.claim(a, ME)
    assert gen == 2
    with pytest.raises(claimdag.AlreadyClaimed) as info:
        store.claim(a, YOU)
    assert info.value.holder == ME and info.value.body["code"] == "already_claimed"
    store.renew(a, ME, gen=gen)
    assert store.reclaim(lease=0) == [(a, 3)]
    with pytest.raises(claimdag.StaleGeneration):
        store.complete(a, gen=2)
    g = store.claim(a, YOU)
    store.complete(a, gen=g, actor=YOU)
    assert [n.display for n in store.list()] == ["ready"]
    assert store.check().ok


def test_the_cli_and_the_module_share_a_postgres_store(pg_url: str) -> None:
    made = subprocess.run([command(), "--dir", pg_url, "upsert", "--summary", "from the cli"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    store = claimdag.Store(pg_url)
    assert store.get(made.stdout.strip()).summary == "from the cli"


def test_a_lease_on_postgres(pg_url: str) -> None:
    store = claimdag.Store(pg_url)
    nid = store.upsert("leased")
    with store.lease_next(ME, ttl=0.5) as lease:
        assert lease is not None
        import time

        time.sleep(1.2)
        assert not lease.lost
    assert store.get(nid).status == "done"


def test_a_wrong_password_never_shows(pg_url: str) -> None:
    bad = "postgres://claimdag:hunter2@127.0.0.1:1/claimdag"
    with pytest.raises(claimdag.StoreIOError) as info:
        claimdag.Store(bad).list()
    assert "hunter2" not in str(info.value) and "127.0.0.1:1" in str(info.value)


def _kill_connections() -> None:
    """The server ends every claimdag connection (pg_terminate_backend)."""
    subprocess.run(
        ["psql", os.environ["CLAIMDAG_TEST_PG"], "-X", "-q", "-t", "-A", "-c",
         "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
         "WHERE application_name = 'claimdag' AND pid <> pg_backend_pid()"],
        check=True, capture_output=True, timeout=60,
    )


def _restart_server() -> None:
    """The server restarts as after a crash (scripts/pg.sh restart: immediate shutdown)."""
    d = os.environ.get("CLAIMDAG_TEST_PG_DIR", "")
    assert d, "CLAIMDAG_TEST_PG_DIR is not set: tests/python/run.sh starts the server"
    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run(["bash", str(root / "scripts" / "pg.sh"), "restart", d],
                   check=True, capture_output=True, timeout=120)


def test_the_module_and_the_mcp_server_reconnect_after_lost_connections(pg_url: str) -> None:
    """Right after the server killed their connections, and after it restarted, the next
    call of a module handle and of a running `claimdag mcp` reconnects and works."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    store = claimdag.Store(pg_url)
    store.config(max_held=0)
    first = store.upsert("before the faults")

    async def main() -> None:
        params = StdioServerParameters(
            command=command(), args=["--dir", pg_url, "mcp"],
            env={"PATH": os.environ.get("PATH", ""), "CLAIMDAG_ACTOR": "name:agent-a"},
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                assert not (await s.call_tool("list", {})).is_error
                for fault, what in ((_kill_connections, "killed"), (_restart_server, "restart")):
                    fault()
                    assert store.get(first).id == first, what
                    nid = store.upsert(f"after {what}")
                    store.complete(nid, gen=store.claim(nid, ME))
                    listed = await s.call_tool("list", {})
                    assert not listed.is_error, (what, listed)
                    made = await s.call_tool("upsert", {"summary": f"by the agent after {what}"})
                    assert not made.is_error, (what, made)
                    grant = await s.call_tool("claim_next", {})
                    assert not grant.is_error and grant.structured_content, (what, grant)

    asyncio.run(main())
    assert store.check().ok
    summaries = {n.summary for n in store.list(terminal=True)}
    assert {"after killed", "after restart", "by the agent after killed",
            "by the agent after restart"} <= summaries
