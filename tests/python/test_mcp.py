"""`claimdag mcp` through a real MCP client nobody here wrote: the official Python SDK
(`mcp` on PyPI). The server is the `claimdag` command the wheel installed (tests/python/run.sh
sets $CLAIMDAG_CLI to it)."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import select
import subprocess
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError as McpError

import claimdag
from conftest import cli, files

A = claimdag.actor("agent-a")
B = claimdag.actor("agent-b")


@asynccontextmanager
async def server(
    d: pathlib.Path, *args: str, cwd: pathlib.Path | None = None
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=cli(), args=["--dir", str(d), "mcp", *args],
        env={"PATH": os.environ.get("PATH", ""), "CLAIMDAG_ACTOR": "name:agent-a"},
        cwd=cwd,
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


def tool_list_chars(d: pathlib.Path, tools: str) -> int:
    """The characters of `tools/list`'s result as the server sends it (compact JSON)."""
    p = subprocess.Popen([cli(), "--dir", str(d), "mcp", "--tools", tools],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    assert p.stdin is not None and p.stdout is not None
    for m in [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "budget", "version": "1"}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]:
        p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
    try:
        for line in p.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                tools_listed = reply["result"]["tools"]
                return len(json.dumps(tools_listed, separators=(",", ":")))
        raise AssertionError("no answer to tools/list")
    finally:
        p.stdin.close()
        p.wait(timeout=10)


# The planner's approve, reject and retry and the pool and rate lists of `all` raised the
# budgets by 300 and 400 tokens (from 2500 and 6000); a tool is about 130 at least. Renew's
# `usage` and upsert's `deadline` and `budget` (about 40 tokens each list) raised them by 50;
# a plan node's `not_before`, `deadline` and `budget` (about 60) raised `all`'s by 100.
@pytest.mark.parametrize("tools,budget", [("worker", 2050), ("planner", 2850), ("all", 6550)])
def test_the_tool_lists_fit_their_token_budgets(store_dir: pathlib.Path, tools: str,
                                                 budget: int) -> None:
    # Tokens counted as a quarter of the characters, the usual measure for English and JSON.
    tokens = tool_list_chars(store_dir, tools) // 4
    assert tokens <= budget, f"--tools {tools}: about {tokens} tokens, budget {budget}"


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
            err, body = await call(s, "claim", node=parent["id"])
            assert err and body["code"] == "already_claimed"
            assert body["holder"] == A and body["generation"] == 2
            assert "already claimed by" in body["message"]
            err, handed = await call(s, "reclaim", lease=0)
            assert handed == {"handed_back": [{"id": parent["id"], "generation": 3}]}
            err, body = await call(s, "complete", node=parent["id"], status="done", gen=gen)
            assert err and body["code"] == "stale_generation" and body["generation"] == 3
            # Another worker (agent-b, through the Python module) takes the node and ends it.
            st = claimdag.Store(store_dir)
            assert st.claim(parent["id"], B) == 4
            st.complete(parent["id"], 4, "done", actor=B)
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
        async with server(store_dir, "--tools", "worker", cwd=tmp_path) as s:
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


def test_a_bound_worker_acts_as_its_actor_in_its_workspace_only(
    store_dir: pathlib.Path,
) -> None:
    st = claimdag.Store(store_dir)
    theirs = st.upsert("agent-b's node")
    gen_b = st.claim(theirs, B)
    todo = st.upsert("a todo node nobody claimed")
    after = st.upsert("waits on the todo node")
    st.link(todo, after)
    elsewhere = st.upsert("a node of another workspace", workspace="other")

    async def main() -> None:
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-a") as s:
            refused = [
                ("release", {"node": theirs, "gen": gen_b, "actor": "name:agent-b"}),
                ("release", {"node": theirs, "gen": gen_b, "actor": B}),
                ("renew", {"node": theirs, "actor": "name:agent-b", "ttl": "365d"}),
                ("complete", {"node": theirs, "status": "done", "gen": gen_b,
                              "actor": "name:agent-b"}),
                ("claim_next", {"assignee": "name:agent-c"}),
                ("claim_next", {"workspace": "other"}),
                ("ready", {"workspace": "other"}),
                ("diff_check", {"actor": "name:agent-b"}),
                # Cancelling a todo node is a planner's act: a worker ends only what it holds.
                ("complete", {"node": todo, "status": "cancelled", "gen": 1}),
                ("complete", {"node": todo, "status": "cancelled", "gen": 1,
                              "actor": "name:agent-a"}),
            ]
            for tool, args in refused:
                before = files(store_dir)
                err, body = await call(s, tool, **args)
                assert err, (tool, args, body)
                assert body["code"] in ("invalid_input", "not_holder", "not_claimed"), body
                assert files(store_dir) == before, (tool, args)
            # Naming its own actor and workspace is fine.
            err, got = await call(s, "claim_next", assignee="name:agent-a", workspace="")
            assert not err and got["claimed"]["id"] == todo, got
            g = got["claimed"]["generation"]
            err, _ = await call(s, "renew", node=todo, gen=g, actor=A)
            assert not err
            err, done = await call(s, "complete", node=todo, status="cancelled", gen=g,
                                   actor="name:agent-a")
            assert not err and done["status"] == "cancelled", done
    run(main())
    n = st.get(theirs)
    assert (n.status, n.holder, n.generation) == ("claimed", B, gen_b)
    assert st.get(after).status == "todo"
    assert st.get(elsewhere).status == "todo"
    assert [n.holder for n in st.list(status="claimed", workspace="")] == [B]


def test_a_refusal_is_in_the_text_content_too(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--tools", "worker") as s:
            claimdag.Store(store_dir).upsert("one")
            _, got = await call(s, "claim_next")
            node, gen = got["claimed"]["id"], got["claimed"]["generation"]
            r = await s.call_tool("complete", {"node": node, "status": "done", "gen": gen + 5})
            assert r.is_error
            texts = [c.text for c in r.content if hasattr(c, "text")]
            assert len(texts) == 1
            # The text is the error body every door gives (SPEC section 4), whole.
            assert json.loads(texts[0]) == {"error": r.structured_content}
            assert r.structured_content["code"] == "stale_generation"
            assert r.structured_content["generation"] == gen
    run(main())


MISTYPED = [
    ("renew", {"gen": -1}, "gen"),
    ("renew", {"gen": "two"}, "gen"),
    ("renew", {"ttl": -5}, "ttl"),
    ("renew", {"ttl": "forever"}, "ttl"),
    ("claim_next", {"resume": "yes"}, "resume"),
    ("upsert", {"summary": "s", "priority": 2**70}, "priority"),
    ("log", {"since": "yesterday"}, "since"),
]


@pytest.mark.parametrize("tool,args,field", MISTYPED)
def test_a_mistyped_argument_is_named(
    store_dir: pathlib.Path, tool: str, args: dict[str, Any], field: str
) -> None:
    st = claimdag.Store(store_dir)
    node = st.upsert("held")
    st.claim(node, A)
    if tool == "renew":
        args = {"node": node, **args}

    async def main() -> None:
        async with server(store_dir) as s:
            before = files(store_dir)
            err, body = await call(s, tool, **args)
            assert err and body["code"] == "invalid_input", body
            # The message names the argument and what it should be, in the user's words.
            assert f"{field}:" in body["message"] or f"{field} " in body["message"], body
            assert "u64" not in body["message"] and "i64" not in body["message"], body
            assert files(store_dir) == before
    run(main())


def test_undecodable_lines_and_malformed_params_are_answered(store_dir: pathlib.Path) -> None:
    p = _raw_server(store_dir)
    _initialize(p)
    assert p.stdin is not None and p.stdout is not None

    def ask(line: bytes) -> dict[str, Any]:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(line + b"\n")
        p.stdin.flush()
        # A generous limit: the answer is due at once; none at all is the defect.
        ready, _, _ = select.select([p.stdout], [], [], 60)
        if not ready:
            p.kill()
            raise AssertionError(f"no answer to {line!r}")
        answer: dict[str, Any] = json.loads(p.stdout.readline())
        return answer

    call_ = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upsert",'
    bad = ask(call_ % 11 + b'"arguments":{"summary":"\xff"}}}')
    assert bad["error"]["code"] == -32700 and bad.get("id") in (11, None), bad
    bad = ask(call_ % 12 + b'"arguments":{"summary":"\\ud800"}}}')
    assert bad["error"]["code"] == -32700 and bad.get("id") in (12, None), bad
    for i, params in enumerate([{"name": "upsert", "arguments": ["summary", "x"]},
                                {"name": "upsert", "arguments": "summary=x"},
                                {"arguments": {"summary": "x"}}]):
        msg = {"jsonrpc": "2.0", "id": 20 + i, "method": "tools/call", "params": params}
        bad = ask(json.dumps(msg).encode())
        assert bad["id"] == 20 + i and bad["error"]["code"] == -32602, bad
    ok = ask(call_ % 30 + b'"arguments":{"summary":"after the bad lines"}}}')
    assert ok["id"] == 30 and ok["result"]["isError"] is False, ok
    p.communicate(timeout=30)
    assert p.returncode == 0
    assert [n.summary for n in claimdag.Store(store_dir).list()] == ["after the bad lines"]


def _git_repo(path: pathlib.Path) -> pathlib.Path:
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    (path / "README").write_text("r")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=env)
    return path


def test_diff_check_runs_git_only_under_the_servers_work_tree(
    store_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    mine = _git_repo(tmp_path / "mine")
    (mine / "sub").mkdir()
    hostile = _git_repo(tmp_path / "hostile")
    ran = tmp_path / "fsmonitor-ran"
    # A repository's core.fsmonitor is a command git runs when it looks at the work tree.
    subprocess.run(["git", "-C", str(hostile), "config", "core.fsmonitor",
                    f"touch {ran}; false"], check=True)

    async def main() -> None:
        async with server(store_dir, "--tools", "worker", cwd=mine) as s:
            for repo in (str(hostile), str(mine / ".." / "hostile"), "../hostile", "/"):
                err, body = await call(s, "diff_check", repo=repo)
                assert err and body["code"] == "invalid_input", body
                assert "--allow-repo" in body["message"], body
            assert not ran.exists(), "git ran in the other repository"
            for repo in (None, str(mine), "sub", str(mine / "sub")):
                err, cov = await call(s, "diff_check", **({} if repo is None else {"repo": repo}))
                assert not err and cov["uncovered"] == [], (repo, cov)
        # The operator may allow more.
        async with server(store_dir, "--tools", "worker", "--allow-repo", str(hostile),
                          cwd=mine) as s:
            err, cov = await call(s, "diff_check", repo=str(hostile))
            assert not err, cov
            assert ran.exists()
    run(main())


def _cli_upsert(d: pathlib.Path, summary: str, *extra: str) -> str:
    """A node made by another process: the claimdag command, not this server."""
    out = subprocess.run([cli(), "--dir", str(d), "upsert", "--summary", summary, *extra],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def test_claim_next_waits_for_the_work_another_process_makes_ready(
    store_dir: pathlib.Path,
) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            loop = asyncio.get_running_loop()
            began = loop.time()
            waiting = asyncio.create_task(s.call_tool("claim_next", {"wait": 25}))
            await asyncio.sleep(1.0)
            assert not waiting.done(), "nothing is ready: the call waits"
            # The server answers other calls while one waits.
            t = loop.time()
            err, ready = await call(s, "ready")
            assert not err and ready == {"ready": []}
            assert loop.time() - t < 5, "a waiting claim_next does not hold the server"
            made = await asyncio.to_thread(_cli_upsert, store_dir, "made while it waited")
            r = await waiting
            took = loop.time() - began
            assert not r.is_error, r
            assert r.structured_content["claimed"]["id"] == made
            assert r.structured_content["claimed"]["generation"] == 2
            assert took < 20, f"woke {took:.1f}s after the call, not when the node came"
    run(main())


def test_a_wait_longer_than_max_wait_is_cut_to_it(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--max-wait", "2s") as s:
            by = {t.name: t for t in (await s.list_tools()).tools}
            about = by["claim_next"].description or ""
            assert "wait up to N seconds for work instead of calling again" in about
            assert "at most 2s" in about
            loop = asyncio.get_running_loop()
            began = loop.time()
            err, got = await call(s, "claim_next", wait=120)
            took = loop.time() - began
            assert not err and got == {"claimed": None}
            assert 2.0 <= took < 30, f"asked 120 s, bound 2 s, waited {took:.1f} s"
    run(main())


def test_a_waiting_claim_next_sends_progress_when_asked(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        notes: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None,
                              message: str | None) -> None:
            notes.append((progress, total, message))

        async with server(store_dir, "--max-wait", "4s") as s:
            r = await s.call_tool("claim_next", {"wait": 4}, progress_callback=on_progress)
            assert not r.is_error and r.structured_content == {"claimed": None}
            assert len(notes) >= 1, notes
            assert all("waiting for ready work" in (m or "") for _, _, m in notes), notes
            assert [p for p, _, _ in notes] == sorted({p for p, _, _ in notes}), notes
            # Without a progressToken, none (and a call answered at once sends none).
            notes.clear()
            r = await s.call_tool("claim_next", {"wait": 2})
            assert not r.is_error
            claimdag.Store(store_dir).upsert("ready at once")
            r = await s.call_tool("claim_next", {"wait": 4}, progress_callback=on_progress)
            assert r.structured_content["claimed"] is not None
            assert notes == []
    run(main())


def test_release_retry_in_and_upsert_not_before_schedule_a_node(
    store_dir: pathlib.Path,
) -> None:
    async def main() -> None:
        async with server(store_dir) as s:
            err, made = await call(s, "upsert", summary="flaky upstream")
            assert not err
            err, got = await call(s, "claim_next")
            assert not err and got["claimed"]["id"] == made["id"]
            err, handed = await call(s, "release", node=made["id"],
                                     gen=got["claimed"]["generation"], retry_in="5m")
            assert not err, handed
            err, n = await call(s, "show", node=made["id"])
            assert n["display"] == "scheduled", n
            assert "scheduled: not before" in n["why"], n
            err, got = await call(s, "claim_next")
            assert got == {"claimed": None}, "not before its time"

            err, later = await call(s, "upsert", summary="tomorrow's report",
                                    not_before="+1h")
            assert not err, later
            err, n = await call(s, "show", node=later["id"])
            assert n["display"] == "scheduled" and n["not_before"] is not None, n
            err, ready = await call(s, "ready")
            assert ready == {"ready": []}
    run(main())


def test_a_cancelled_or_abandoned_wait_stops_and_claims_nothing(
    store_dir: pathlib.Path,
) -> None:
    import time

    p = _raw_server(store_dir)
    _initialize(p)
    _send(p, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
              "params": {"name": "claim_next", "arguments": {"wait": 25}}})
    time.sleep(0.5)
    _send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 5, "reason": "the user gave up"}})
    time.sleep(2.0)  # the wait stops within a second of the cancel
    made = _cli_upsert(store_dir, "made after the cancel")
    time.sleep(1.5)
    n = claimdag.Store(store_dir).get(made)
    assert n.display == "ready" and n.generation == 1, "nobody claimed it"
    # A client that goes away mid-wait: the server ends at once, not after the wait.
    _send(p, {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
              "params": {"name": "claim_next", "arguments": {"wait": 25, "role": "nobody"}}})
    time.sleep(0.5)
    began = time.monotonic()
    p.communicate(timeout=20)
    assert p.returncode == 0
    assert time.monotonic() - began < 5


def text_of(r: Any) -> str:
    return "".join(c.text for c in r.content if getattr(c, "type", "") == "text")


def test_a_checkpoint_and_an_output_reach_the_next_holder(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--actor", "name:agent-a") as a:
            _, fetch = await call(a, "upsert", summary="fetch the rows")
            _, parse = await call(a, "upsert", summary="parse the rows")
            await call(a, "link", parent=fetch["id"], child=parse["id"])
            err, got = await call(a, "claim_next")
            assert not err and got["claimed"]["id"] == fetch["id"], got
            assert got["claimed"]["progress"] is None and got["claimed"]["inputs"] == {}
            gen = got["claimed"]["generation"]
            r = await a.call_tool("renew", {"node": fetch["id"], "gen": gen,
                                            "progress": "fetched 2 of 5 pages"})
            assert not r.is_error, r
            assert r.structured_content["cancel_requested"] is None
            assert text_of(r) == "ok"
            # agent-a stops; its checkpoint stays with the node.
            err, _ = await call(a, "release", node=fetch["id"], gen=gen)
            assert not err
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-b") as b:
            err, got = await call(b, "claim_next")
            c = got["claimed"]
            assert not err and c["id"] == fetch["id"], got
            assert c["progress"] == "fetched 2 of 5 pages", c
            assert isinstance(c["progress_at"], int)
            err, done = await call(b, "complete", node=fetch["id"], status="done",
                                   gen=c["generation"], output={"rows": 3, "pages": [1, 2]})
            assert not err and done["status"] == "done", done
            err, n = await call(b, "show", node=fetch["id"])
            assert n["output"] == {"rows": 3, "pages": [1, 2]}, n
            err, got = await call(b, "claim_next")
            assert got["claimed"]["id"] == parse["id"], got
            assert got["claimed"]["inputs"] == {fetch["id"]: {"rows": 3, "pages": [1, 2]}}
    run(main())


def test_a_leads_cancel_reaches_the_workers_renew(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-b") as w, \
                server(store_dir, "--tools", "planner", "--actor", "name:agent-a") as lead:
            names = {t.name for t in (await w.list_tools()).tools}
            assert "cancel" not in names and "complete_many" not in names
            # A lead that plans may stop work; it finishes none.
            names = {t.name for t in (await lead.list_tools()).tools}
            assert "cancel" in names and "complete" not in names, names
            _, made = await call(lead, "upsert", summary="rewrite the parser")
            _, spare = await call(lead, "upsert", summary="nobody took this one", priority=-5)
            err, got = await call(w, "claim_next")
            node, gen = got["claimed"]["id"], got["claimed"]["generation"]
            assert node == made["id"]
            err, asked = await call(lead, "cancel", node=node,
                                    reason="the spec changed: the parser stays")
            assert not err and asked == {"id": node, "status": "claimed", "requested": True}
            r = await w.call_tool("renew", {"node": node, "gen": gen})
            assert not r.is_error, r
            c = r.structured_content["cancel_requested"]
            assert c["by"] == A and c["reason"] == "the spec changed: the parser stays", c
            text = text_of(r)
            assert text.startswith(f"Cancel requested by {A} at "), text
            assert "the spec changed: the parser stays." in text, text
            assert ("Stop working on node" in text
                    and "call complete with status cancelled" in text), text
            with pytest.raises(McpError):
                await w.call_tool("cancel", {"node": spare["id"]})
            err, done = await call(w, "complete", node=node, status="cancelled", gen=gen)
            assert not err and done["status"] == "cancelled", done
            err, n = await call(lead, "show", node=node)
            assert n["status"] == "cancelled" and n["cancel_requested"] is None, n
            # A todo node is cancelled at once; a finished one is refused.
            err, gone = await call(lead, "cancel", node=spare["id"], reason="not needed")
            assert not err and gone == {"id": spare["id"], "status": "cancelled",
                                        "requested": False}, gone
            err, body = await call(lead, "cancel", node=spare["id"])
            assert err and body["code"] == "terminal", body
    run(main())


def test_complete_many_finishes_all_or_nothing(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--actor", "name:agent-a") as s:
            err, _ = await call(s, "config", key="max_held", value="0")
            assert not err
            ids = [(await call(s, "upsert", summary=f"shard {i}"))[1]["id"] for i in range(3)]
            gens = []
            for i in ids:
                err, g = await call(s, "claim", node=i)
                assert not err, g
                gens.append(g["generation"])
            stale = [{"node": ids[0], "status": "done", "gen": gens[0]},
                     {"node": ids[1], "status": "done", "gen": gens[1] + 1}]
            before = files(store_dir)
            err, body = await call(s, "complete_many", completions=stale)
            assert err and body["code"] == "stale_generation", body
            assert files(store_dir) == before
            many = [{"node": ids[0], "status": "done", "gen": gens[0], "output": {"n": 0}},
                    {"node": ids[1], "status": "failed", "gen": gens[1], "note": "bad shard"},
                    {"node": ids[2], "status": "done", "gen": gens[2]}]
            err, done = await call(s, "complete_many", completions=many)
            assert not err, done
            assert done == {"completed": [{"id": ids[0], "status": "done"},
                                          {"id": ids[1], "status": "failed"},
                                          {"id": ids[2], "status": "done"}]}
            err, n = await call(s, "show", node=ids[0])
            assert n["output"] == {"n": 0}
    run(main())


def test_claim_next_with_count_claims_a_batch(store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-b") as w, \
                server(store_dir, "--actor", "name:agent-a") as lead:
            err, _ = await call(lead, "config", key="max_held", value="2")
            assert not err
            ids = [(await call(lead, "upsert", summary=f"batch {i}"))[1]["id"]
                   for i in range(3)]
            err, got = await call(w, "claim_next", count=5)
            assert not err, got
            claimed = got["claimed"]
            assert [c["id"] for c in claimed] == ids[:2], claimed
            assert all(c["generation"] == 2 and c["inputs"] == {} for c in claimed)
            err, body = await call(w, "claim_next", count=2)
            assert err and body["code"] == "assignee_busy", body
            err, got = await call(w, "claim_next", count=0)
            assert err and got["code"] == "invalid_input" and "count" in got["message"], got
    run(main())


def test_a_waiting_batch_waits_and_a_cancelled_one_hands_back_all(
    store_dir: pathlib.Path,
) -> None:
    import time

    async def main() -> None:
        async with server(store_dir, "--actor", "name:agent-b") as w:
            err, _ = await call(w, "config", key="max_held", value="0")
            assert not err

            async def later() -> None:
                await asyncio.sleep(1.6)  # past the server's first slice of the wait
                _cli_upsert(store_dir, "ready during the wait")

            made = asyncio.create_task(later())
            began = time.monotonic()
            err, got = await call(w, "claim_next", count=3, wait=20)
            await made
            assert not err and len(got["claimed"]) == 1, got
            assert time.monotonic() - began < 10
    run(main())
    # A batch claimed as its request is cancelled is handed back, every node of it.
    p = _raw_server(store_dir)
    _initialize(p)
    _send(p, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
              "params": {"name": "claim_next", "arguments": {"wait": 25, "count": 2,
                                                             "role": "late"}}})
    time.sleep(0.3)
    _send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 7, "reason": "gave up"}})
    a = _cli_upsert(store_dir, "late one", "--role", "late")
    b = _cli_upsert(store_dir, "late two", "--role", "late")
    time.sleep(2.5)
    s = claimdag.Store(store_dir)
    for nid in (a, b):
        assert s.get(nid).status == "todo", s.log(nid)
    p.communicate(timeout=20)


def test_a_lead_plans_an_epic_with_a_budget_and_an_agent_is_stopped_by_it(
        store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-b") as w, \
                server(store_dir, "--tools", "planner", "--actor", "name:agent-a") as lead:
            _, epic = await call(lead, "upsert", summary="release 2.0", kind="epic")
            _, notes = await call(lead, "upsert", summary="release notes", parent=epic["id"],
                                  budget="tokens=1000", deadline="+1h")
            _, gate = await call(lead, "upsert", summary="sign off", kind="gate")
            err, got = await call(w, "claim_next")
            assert not err and got["claimed"]["id"] == notes["id"], got
            gen = got["claimed"]["generation"]
            r = await w.call_tool("renew", {"node": notes["id"], "gen": gen,
                                            "usage": "tokens=1500"})
            assert not r.is_error, r
            c = r.structured_content["cancel_requested"]
            assert c["reason"] == "over budget: tokens 1500 of 1000", c
            err, done = await call(w, "complete", node=notes["id"], status="cancelled", gen=gen)
            assert not err, done
            err, shown = await call(lead, "show", node=epic["id"])
            assert shown["status"] == "cancelled" and shown["children"]["cancelled"] == 1, shown
            err, body = await call(lead, "approve", node=gate["id"], gen=2)
            assert err and body["code"] == "stale_generation", body
            err, decided = await call(lead, "approve", node=gate["id"], gen=1, note="ok")
            assert not err and decided["status"] == "done", decided
    run(main())


def test_the_tools_say_what_a_bound_agent_may_give_and_what_it_got(
        store_dir: pathlib.Path) -> None:
    async def main() -> None:
        async with server(store_dir, "--tools", "worker", "--actor", "name:agent-b") as w, \
                server(store_dir, "--tools", "planner", "--actor", "name:agent-a") as lead:
            tools = {t.name: t for t in (await w.list_tools()).tools}
            # What the server fixes is not offered: no actor, assignee or workspace.
            for t in tools.values():
                props = t.input_schema.get("properties", {})
                assert not {"actor", "assignee", "workspace"} & set(props), (t.name, props)
            status = tools["complete"].input_schema["properties"]["status"]
            assert status["enum"] == ["done", "failed", "cancelled"], status
            # Each profile is told its own job.
            worker_says = await _instructions(store_dir, "worker")
            planner_says = await _instructions(store_dir, "planner")
            assert "claim_next" in worker_says and "To work" in worker_says
            assert "To plan" in planner_says and "claim_next" not in planner_says
            # An empty list says so; nothing to claim says whether the work is finished; a
            # claim says its lease and how often to renew.
            r = await lead.call_tool("ready", {})
            assert r.content[0].text == "nothing: no node is ready", r
            r = await w.call_tool("claim_next", {})
            assert "the work is finished, stop" in r.content[0].text, r
            _, made = await call(lead, "upsert", summary="a node")
            r = await w.call_tool("claim_next", {"ttl": "9m"})
            got = r.structured_content["claimed"]
            assert got["id"] == made["id"] and got["ttl_ms"] == 540000, got
            assert "renew about every 3m" in r.content[0].text, r.content[0].text
    run(main())


async def _instructions(d: pathlib.Path, tools: str) -> str:
    params = StdioServerParameters(
        command=cli(), args=["--dir", str(d), "mcp", "--tools", tools, "--actor", "name:x"],
        env={"PATH": os.environ.get("PATH", "")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return init.instructions or ""
