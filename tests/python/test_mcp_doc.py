"""docs/how-to/mcp.md runs as written, through the official MCP SDK: the client entry of
its first JSON block starts the server (its store, `/srv/claims`, a temporary one) and the
worked session's calls answer what the page says (a `...` ending a string stands for the
rest of it; an answer may carry more fields than the page shows); the tokens of its HTTP
block are made as it makes them, and its Python function works against `claimdag serve`."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import re
import subprocess
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import cli
from test_serve import served

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "how-to" / "mcp.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", PAGE, re.M | re.S)


def like(expected: Any, got: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(got, dict) and all(k in got and like(v, got[k])
                                             for k, v in expected.items())
    if isinstance(expected, str) and expected.endswith("..."):
        return isinstance(got, str) and got.startswith(expected[:-3])
    return expected == got


def session_calls() -> list[tuple[str, dict, Any]]:
    """(tool, arguments, the answer the page shows) of the worked session, in order."""
    text = PAGE[PAGE.index("## A worked session"):PAGE.index("## Prompts")]
    text = re.sub(r"\s+", " ", text)
    found = re.findall(r"`(\w+) (\{[^`]*\})` (?:→|again, until it answers) `(\{[^`]*\})`", text)
    return [(tool, json.loads(args), json.loads(answer)) for tool, args, answer in found]


def test_the_client_entry_and_the_worked_session_run_as_written(tmp_path: pathlib.Path) -> None:
    entry = json.loads(blocks("json")[0])["mcpServers"]["claimdag"]
    assert entry["command"] == "claimdag"
    store = tmp_path / "srv-claims"
    env = {**entry["env"], "CLAIMDAG_DIR": str(store), "PATH": os.environ.get("PATH", "")}
    assert entry["env"]["CLAIMDAG_DIR"] == "/srv/claims"
    subprocess.run([cli(), "--dir", str(store), "--workspace", entry["env"]["CLAIMDAG_WORKSPACE"],
                    "upsert", "--summary", "parse the manifest header"], check=True,
                   capture_output=True)
    calls = session_calls()
    assert [c[0] for c in calls] == ["claim_next", "renew", "complete", "claim_next"], calls

    async def main() -> None:
        params = StdioServerParameters(command=cli(), args=entry["args"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                for tool, args, expected in calls:
                    got = await s.call_tool(tool, args)
                    assert not got.is_error, (tool, got.content)
                    assert like(expected, got.structured_content), (
                        tool, expected, got.structured_content)

    asyncio.run(main())
    log = json.loads(subprocess.run(
        [cli(), "--dir", str(store), "--workspace", "frontend", "--json", "log"],
        check=True, capture_output=True, text=True).stdout)
    assert [e["verb"] for e in log] == ["create", "claim", "renew", "complete"]
    assert {e.get("actor_name") for e in log[1:]} == {"codex-1"}


def test_the_http_tokens_and_the_python_client_run_as_written(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "claims"
    node = subprocess.run([cli(), "--dir", str(store), "--workspace", "frontend", "upsert",
                           "--summary", "style the login form"], check=True,
                          capture_output=True, text=True).stdout.strip()
    made = [line for line in blocks("sh")[0].splitlines()
            if line.startswith("claimdag --workspace frontend actor token")]
    assert len(made) == 2
    for line in made:
        path = f"{pathlib.Path(cli()).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        subprocess.run(["bash", "-c", line], check=True, cwd=tmp_path,
                       env={**os.environ, "CLAIMDAG_DIR": str(store), "PATH": path})
    token = (tmp_path / "codex-1.token").read_text().strip()
    assert token.startswith("cdt_") and (tmp_path / "planner-1.token").read_text().strip()
    code: dict[str, Any] = {}
    exec(compile(blocks("python")[0], "mcp.md", "exec"), code)  # noqa: S102 (the page's own)
    with served(store) as s:
        asyncio.run(code["work"](s.url.rstrip("/"), token))
    shown = json.loads(subprocess.run([cli(), "--dir", str(store), "--json", "show", node],
                                      check=True, capture_output=True, text=True).stdout)
    assert (shown["status"], shown["holder_name"]) == ("claimed", "codex-1")
