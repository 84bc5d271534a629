"""`claimdag serve`'s `/mcp`: the MCP tools over Streamable HTTP, driven by the official MCP
Python SDK's client with an actor's token, as a remote agent would."""

from __future__ import annotations

import asyncio
import json
import pathlib
import re
import subprocess
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import cli, files
from test_serve import served


def run(store: pathlib.Path, *args: str) -> str:
    return subprocess.run([cli(), "--dir", str(store), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@asynccontextmanager
async def session(url: str, token: str) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(f"{url}mcp", http_client=client) as (r, w, *_):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def test_an_agent_claims_renews_with_progress_and_completes_over_http(
        store_dir: pathlib.Path) -> None:
    node = run(store_dir, "--workspace", "app", "upsert", "--summary", "parse the header")
    token = run(store_dir, "--workspace", "app", "actor", "token", "codex-1")
    progress: list[float] = []

    async def main() -> None:
        async with session(s.url, token) as mcp:
            tools = {t.name for t in (await mcp.list_tools()).tools}
            assert {"claim_next", "renew", "complete"} <= tools
            assert "upsert" not in tools, "the worker profile's tools only"

            async def seen(p: float, total: float | None, message: str | None) -> None:
                progress.append(p)

            got = structured(await mcp.call_tool("claim_next", {"wait": 3},
                                                 progress_callback=seen))["claimed"]
            assert got["id"] == node
            gen = got["generation"]
            renewed = structured(await mcp.call_tool(
                "renew", {"node": node, "gen": gen, "progress": "half way"}))
            assert renewed["ok"] and renewed["id"] == node
            done = structured(await mcp.call_tool(
                "complete", {"node": node, "gen": gen, "status": "done", "output": "ok"}))
            assert done["status"] == "done"
            # A node someone else holds: the refusal names the holder.
            other_node = run(store_dir, "--workspace", "app", "upsert", "--summary", "theirs")
            run(store_dir, "--workspace", "app", "claim", other_node, "--assignee",
                "name:claude-2")
            held = await mcp.call_tool("renew", {"node": other_node, "gen": 2})
            assert held.is_error and held.structured_content["holder_name"] == "claude-2"
            assert "(name:claude-2)" in held.content[0].text
            # Another actor's name, another workspace: refused as the stdio server refuses.
            other = await mcp.call_tool("claim_next", {"assignee": "name:someone-else"})
            assert other.is_error
            assert other.structured_content["code"] == "invalid_input"

    with served(store_dir) as s:
        asyncio.run(main())
    shown = json.loads(run(store_dir, "--workspace", "app", "--json", "show", node))
    assert shown["status"] == "done" and shown["completed_by_name"] == "codex-1"
    assert shown["progress"] == "half way"
    assert token not in s.stderr


def test_waiting_over_http_sends_progress(store_dir: pathlib.Path) -> None:
    token = run(store_dir, "--workspace", "app", "actor", "token", "codex-1")
    progress: list[float] = []

    async def main() -> None:
        async with session(s.url, token) as mcp:
            async def seen(p: float, total: float | None, message: str | None) -> None:
                progress.append(p)

            async def later() -> str:
                await asyncio.sleep(2.5)
                return run(store_dir, "--workspace", "app", "upsert", "--summary", "late")

            made = asyncio.create_task(later())
            got = structured(await mcp.call_tool("claim_next", {"wait": 20},
                                                 progress_callback=seen))["claimed"]
            assert got["id"] == await made

    with served(store_dir) as s:
        asyncio.run(main())
    assert progress, "a waiting claim_next tells a client that asked that it is alive"


def test_mcp_needs_a_good_token_and_changes_nothing_without_one(
        store_dir: pathlib.Path) -> None:
    run(store_dir, "upsert", "--summary", "a node")
    token = run(store_dir, "actor", "token", "codex-1")
    run(store_dir, "actor", "revoke", "codex-1")
    before = files(store_dir)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    with served(store_dir) as s:
        for auth in ({}, {"Authorization": f"Bearer {token}"},
                     {"Authorization": "Bearer cdt_0000000000000000_" + "0" * 64}):
            r = httpx.post(f"{s.url}mcp", json=init, headers={**headers, **auth})
            assert r.status_code == 401, r.text
            assert token not in r.text
        metrics = httpx.get(f"{s.url}metrics").text
    assert files(store_dir) == before
    assert 'claimdag_auth_failures_total{reason="revoked"} 1' in metrics
    assert 'claimdag_auth_failures_total{reason="unknown"} 1' in metrics


@pytest.mark.parametrize("profile", ["worker", "planner", "all"])
def test_a_tokens_tools_are_its_profiles(store_dir: pathlib.Path, profile: str) -> None:
    token = run(store_dir, "actor", "token", "codex-1", "--profile", profile)

    async def main() -> set[str]:
        async with session(s.url, token) as mcp:
            return {t.name for t in (await mcp.list_tools()).tools}

    with served(store_dir) as s:
        over_http = asyncio.run(main())
    from test_serve_tokens import profile_tools

    stdio = profile_tools(str(store_dir), profile)
    # The same tools as the stdio server's, but for those that reach the server's files.
    assert over_http == stdio - {"diff_check", "copy"}


def test_the_http_doors_are_recorded(store_dir: pathlib.Path) -> None:
    token = run(store_dir, "actor", "token", "codex-1", "--profile", "all")
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "upsert", "arguments": {"summary": "over stdio"}}},
    ]
    subprocess.run([cli(), "--dir", str(store_dir), "mcp", "--tools", "all"],
                   input="".join(json.dumps(m) + "\n" for m in msgs),
                   capture_output=True, text=True, timeout=30, check=True)

    async def over_mcp() -> None:
        async with session(s.url, token) as mcp:
            structured(await mcp.call_tool("upsert", {"summary": "over /mcp"}))

    with served(store_dir) as s:
        r = httpx.post(f"{s.url}v1/upsert", json={"summary": "over /v1"}, headers=s.auth())
        assert r.status_code == 200, r.text
        asyncio.run(over_mcp())
        with httpx.Client() as page:
            assert page.get(f"{s.url}?token={s.token}").status_code == 303
            csrf = re.search(r'<meta name="claimdag-csrf" content="([0-9a-f]+)"',
                             page.get(s.url).text)
            assert csrf
            r = page.post(f"{s.url}v1/upsert", json={"summary": "from the dashboard"},
                          headers={"X-Claimdag-Csrf": csrf.group(1)})
            assert r.status_code == 200, r.text
    log = json.loads(run(store_dir, "--json", "log"))
    creates = [(e["verb"], e.get("door")) for e in log if e["verb"] == "create"]
    assert creates == [("create", "mcp"), ("create", "http"), ("create", "mcp"),
                       ("create", "dashboard")]
