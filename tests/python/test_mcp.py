"""`claimdag mcp` through a real MCP client nobody here wrote: the official Python SDK
(`mcp` on PyPI). The server is the release `claimdag` command (tests/python/run.sh builds it
and sets $CLAIMDAG_CLI)."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError as McpError

import claimdag

A = claimdag.actor("agent-a")
B = claimdag.actor("agent-b")


def cli() -> str:
    path = os.environ.get("CLAIMDAG_CLI", "")
    assert path and pathlib.Path(path).exists(), (
        "CLAIMDAG_CLI is not set: tests/python/run.sh builds the command and sets it"
    )
    return path


@asynccontextmanager
async def server(d: pathlib.Path, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=cli(), args=["--dir", str(d), "mcp", *args],
        env={"PATH": os.environ.get("PATH", ""), "CLAIMDAG_ACTOR": "name:agent-a"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(s: ClientSession, tool: str, **args: Any) -> tuple[bool, Any]:
    r = await s.call_tool(tool, args)
    return bool(r.is_error), r.structured_content


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_tools_have_schemas_annotations_and_profiles(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            tools = (await s.list_tools()).tools
            names = {t.name for t in tools}
            assert {"upsert", "link", "unlink", "list", "show", "ready", "next", "claim",
                    "claim_next", "renew", "release", "complete", "reopen", "reclaim",
                    "import", "archive", "unarchive", "log", "graph", "check",
                    "config"} <= names
            for t in tools:
                assert t.input_schema["type"] == "object", t.name
                assert t.output_schema and t.output_schema["type"] == "object", t.name
                assert t.description and len(t.description) < 250
            by = {t.name: t for t in tools}
            assert by["show"].annotations.read_only_hint is True
            assert by["complete"].annotations.read_only_hint is False
            assert by["upsert"].annotations.idempotent_hint is True
            assert "summary" in by["upsert"].input_schema["properties"]
            assert "ready" in by["ready"].output_schema["properties"]
        async with server(store_dir, "--tools", "worker") as s:
            names = sorted(t.name for t in (await s.list_tools()).tools)
            assert names == sorted(["ready", "claim_next", "show", "renew", "complete",
                                    "release", "log", "diff_check"])
            with pytest.raises(McpError):
                await s.call_tool("upsert", {"summary": "not a worker tool"})
    run(main())


def test_the_fence_through_mcp(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            err, parent = await call(s, "upsert", summary="parse the manifest header")
            assert not err
            err, child = await call(s, "upsert", summary="reject a manifest with no header")
            await call(s, "link", parent=parent["id"], child=child["id"])
            # The server's actor is bound (CLAIMDAG_ACTOR=name:agent-a): no assignee needed.
            err, got = await call(s, "claim_next")
            assert not err and got["claimed"]["id"] == parent["id"]
            gen = got["claimed"]["generation"]
            assert gen == 2
            err, body = await call(s, "claim", node=parent["id"], assignee="name:agent-b")
            assert err and body["code"] == "already_claimed"
            assert body["holder"] == A and body["generation"] == 2
            assert "already claimed by" in body["message"]
            err, handed = await call(s, "reclaim", lease=0)
            assert handed == {"handed_back": [{"id": parent["id"], "generation": 3}]}
            err, body = await call(s, "complete", node=parent["id"], status="done", gen=gen)
            assert err and body["code"] == "stale_generation" and body["generation"] == 3
            err, got = await call(s, "claim", node=parent["id"], assignee="name:agent-b")
            assert not err and got["generation"] == 4
            err, done = await call(s, "complete", node=parent["id"], status="done",
                                   gen=4, actor="name:agent-b")
            assert not err and done["status"] == "done"
            err, ready = await call(s, "ready")
            assert [p["id"] for p in ready["ready"]] == [child["id"]]
            r = await s.call_tool("show", {"node": child["id"][:8]})
            assert r.structured_content["display"] == "ready"
            assert any("ready" in c.text for c in r.content if hasattr(c, "text"))
    run(main())


def test_an_agent_checks_its_diff_against_its_claims(
    store_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "parser").mkdir(parents=True)
    (repo / "src" / "parser" / "lex.rs").write_text("lex")
    (repo / "src" / "cli.rs").write_text("cli")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)

    async def main() -> None:
        async with server(store_dir, "--tools", "worker") as s:
            st = claimdag.Store(str(store_dir))
            st.upsert("the parser", resources=["src/parser/"])
            err, got = await call(s, "claim_next")
            assert not err
            (repo / "src" / "parser" / "lex.rs").write_text("lex 2")
            err, cov = await call(s, "diff_check", repo=str(repo))
            assert not err and cov["uncovered"] == [], cov
            assert cov["files"][0]["covered_by"] == [got["claimed"]["id"]]
            (repo / "src" / "cli.rs").write_text("cli 2")
            err, cov = await call(s, "diff_check", repo=str(repo))
            # Uncovered files are an answer, not a refusal: the agent reads the list.
            assert not err and cov["uncovered"] == ["src/cli.rs"], cov
            err, body = await call(s, "diff_check", repo=str(tmp_path))
            assert err and body["code"] == "invalid_input"
            assert "needs a git work tree" in body["message"]
    run(main())


def test_resume_prompts_and_the_graph_resource(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            await call(s, "upsert", summary="one")
            await call(s, "upsert", summary="two")
            _, first = await call(s, "claim_next")
            err, busy = await call(s, "claim_next")
            assert err and busy["code"] == "assignee_busy"
            assert busy["held"] == [first["claimed"]["id"]]
            _, again = await call(s, "claim_next", resume=True)
            assert again["claimed"]["id"] == first["claimed"]["id"]
            assert again["claimed"]["resumed"] is True
            prompts = {p.name for p in (await s.list_prompts()).prompts}
            assert prompts == {"work-next", "sweep-stale"}
            p = await s.get_prompt("work-next", {"role": "reviewer"})
            assert "claim_next" in p.messages[0].content.text
            res = await s.read_resource("claimdag://graph")
            text = res.contents[0].text
            assert text.startswith("flowchart LR") and "one" in text
    run(main())


def test_several_servers_race_claim_next_and_grant_each_node_once(
    store_dir: pathlib.Path,
) -> None:
    store = claimdag.Store(store_dir)
    store.config(max_held=0)
    ids = {store.upsert(f"raced {i}") for i in range(30)}

    async def agent(name: str) -> list[tuple[str, int]]:
        params = StdioServerParameters(
            command=cli(), args=["--dir", str(store_dir), "mcp", "--actor", f"name:{name}"],
            env={"PATH": os.environ.get("PATH", "")},
        )
        got: list[tuple[str, int]] = []
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                while True:
                    err, c = await call(s, "claim_next")
                    assert not err, c
                    if c["claimed"] is None:
                        return got
                    got.append((c["claimed"]["id"], c["claimed"]["generation"]))
                    err, _ = await call(s, "complete", node=c["claimed"]["id"],
                                        status="done", gen=c["claimed"]["generation"])
                    assert not err

    async def main() -> list[list[tuple[str, int]]]:
        return list(await asyncio.gather(*(agent(f"racer-{i}") for i in range(4))))

    grants = [g for per in run(main()) for g in per]
    assert sorted(i for i, _ in grants) == sorted(ids), "every node granted exactly once"
    assert all(g == 2 for _, g in grants)
    assert store.check().ok


def test_bad_input_gets_clear_errors_and_never_breaks_the_server(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            with pytest.raises(McpError) as info:
                await s.call_tool("fly", {})
            assert "unknown tool" in str(info.value)
            err, body = await call(s, "upsert")
            assert err and body["code"] == "invalid_input" and "summary" in body["message"]
            err, body = await call(s, "claim", node=["not", "a", "string"])
            assert err and body["code"] == "invalid_input"
            err, body = await call(s, "upsert", summary="x" * 1_000_000)
            assert err and body["code"] == "invalid_input" and "4096" in body["message"]
            err, body = await call(s, "claim", node="deadbeef", colour="red")
            assert err and "colour" in body["message"]
            err, body = await call(s, "complete", node="0" * 32, status="finished", gen=1)
            assert err and body["code"] == "invalid_input"
            err, ok = await call(s, "check")
            assert not err and ok["ok"] is True
    run(main())
    assert claimdag.Store(store_dir).list() == []


def _raw_server(d: pathlib.Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [cli(), "--dir", str(d), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", ""),
                                     "CLAIMDAG_ACTOR": "name:raw"},
    )


def _send(p: subprocess.Popen[bytes], msg: object) -> None:
    assert p.stdin is not None
    p.stdin.write((msg if isinstance(msg, str) else json.dumps(msg)).encode() + b"\n")
    p.stdin.flush()


def _initialize(p: subprocess.Popen[bytes]) -> None:
    _send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}})
    assert p.stdout is not None
    assert json.loads(p.stdout.readline())["id"] == 1
    _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_invalid_json_rpc_is_answered_and_the_server_goes_on(store_dir: pathlib.Path) -> None:
    p = _raw_server(store_dir)
    _initialize(p)
    _send(p, "{ this is not json")
    _send(p, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
              "params": {"name": "upsert", "arguments": {"summary": "after garbage"}}})
    out, _ = p.communicate(timeout=30)  # closes stdin: the client goes away
    assert p.returncode == 0
    answers = {m.get("id"): m for m in map(json.loads, out.decode().splitlines())}
    # The garbage line gets a parse error (or nothing); the call after it is answered.
    assert all(m.get("error", {}).get("code") == -32700 for i, m in answers.items() if i != 7)
    assert answers[7]["result"]["isError"] is False, answers
    assert [n.summary for n in claimdag.Store(store_dir).list()] == ["after garbage"]


def test_the_server_exits_cleanly_when_stdin_closes_even_mid_call(
    store_dir: pathlib.Path,
) -> None:
    store = claimdag.Store(store_dir)
    plan = {"nodes": [{"key": f"k{i}", "summary": f"node {i}"} for i in range(2000)]}
    p = _raw_server(store_dir)
    _initialize(p)
    _send(p, {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
              "params": {"name": "import", "arguments": {"plan": plan}}})
    p.communicate(timeout=60)  # closes stdin while the import may still run
    assert p.returncode == 0
    report = store.check()
    assert report.ok and report.nodes in (0, 2000), "the import is all or nothing"
