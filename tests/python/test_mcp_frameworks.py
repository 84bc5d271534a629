"""`claimdag mcp` loaded by the agent frameworks the way their users load it: every tool's
schema through the OpenAI Agents SDK's strict conversion and langchain-mcp-adapters, the
refusal codes as each framework hands them to its model, and a pydantic-ai agent loop (its
FunctionModel: no network, no model) that claims, is refused with stale_generation, and
completes. tests/python/run.sh installs the frameworks (langchain-mcp-adapters in an
environment of its own, $CLAIMDAG_LANGCHAIN_PYTHON, as it needs the MCP SDK 1.x)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import pathlib
import subprocess
from typing import Any

import claimdag
from conftest import cli

A = claimdag.actor("agent-a")
HERE = pathlib.Path(__file__).resolve().parent

# Some libraries read a key when imported; nothing here talks to a model service.
os.environ.setdefault("OPENAI_API_KEY", "sk-test-no-network")


def held_node(store_dir: pathlib.Path, actor: str) -> tuple[str, int]:
    """A node `actor` holds, and a generation its claim is not at (a complete with it is
    stale_generation)."""
    st = claimdag.Store(store_dir)
    node = st.upsert("a node held by the agent")
    gen = st.claim(node, actor)
    return node, gen + 7


def formats(schema: Any) -> list[str]:
    """Every `format` in a schema, however deep."""
    if isinstance(schema, dict):
        found = [schema["format"]] if isinstance(schema.get("format"), str) else []
        return found + [f for v in schema.values() for f in formats(v)]
    if isinstance(schema, list):
        return [f for v in schema for f in formats(v)]
    return []


def test_every_tool_passes_the_openai_agents_strict_conversion(
    store_dir: pathlib.Path,
) -> None:
    from agents.mcp import MCPServerStdio, MCPUtil
    from agents.run_context import RunContextWrapper
    from agents.strict_schema import ensure_strict_json_schema

    node, stale = held_node(store_dir, A)

    async def main() -> None:
        params = {"command": cli(), "args": ["--dir", str(store_dir), "mcp",
                                             "--actor", "name:agent-a"], "env": {}}
        async with MCPServerStdio(params=params, name="claimdag") as server:
            tools = await server.list_tools()
            assert len(tools) >= 20
            for tool in tools:
                schema = tool.input_schema
                assert "properties" in schema and "$ref" not in json.dumps(schema), tool.name
                assert all(f in ("int64", "int32") for f in formats(schema)), tool.name
                ensure_strict_json_schema(copy.deepcopy(schema))
                converted = MCPUtil.to_function_tool(tool, server, True)
                assert converted.strict_json_schema, tool.name
            complete = next(t for t in tools if t.name == "complete")
            out = await MCPUtil.invoke_mcp_tool(
                server, complete, RunContextWrapper(context=None),
                json.dumps({"node": node, "status": "done", "gen": stale}),
            )
            # What the model reads: the error body, code and all.
            text = out["text"] if isinstance(out, dict) else str(out)
            assert json.loads(text)["error"]["code"] == "stale_generation", out
    asyncio.run(main())


def test_every_tool_converts_with_langchain_mcp_adapters(store_dir: pathlib.Path) -> None:
    python = os.environ.get("CLAIMDAG_LANGCHAIN_PYTHON", str(HERE.parents[1] / ".venv-langchain"
                                                              / "bin" / "python"))
    assert pathlib.Path(python).exists(), (
        f"{python} is missing: tests/python/run.sh makes the langchain-mcp-adapters environment"
    )
    node, stale = held_node(store_dir, claimdag.actor("langchain"))
    out = subprocess.run(
        [python, str(HERE / "frameworks" / "langchain_tools.py"), cli(), str(store_dir), node,
         str(stale)], capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["failed"] == {}, seen["failed"]
    assert len(seen["converted"]) >= 20
    assert seen["refusal"]["status"] == "error"
    assert json.loads(seen["refusal"]["content"])["error"]["code"] == "stale_generation"


def test_a_pydantic_ai_agent_claims_is_refused_and_completes(store_dir: pathlib.Path) -> None:
    from fastmcp.client.transports import StdioTransport

    transport = StdioTransport(command=cli(), args=["--dir", str(store_dir), "mcp",
                                                    "--tools", "worker", "--actor",
                                                    "name:agent-a"], env={}, keep_alive=False)
    scripted_agent(store_dir, transport)


def test_a_pydantic_ai_agent_works_over_http_with_its_token(store_dir: pathlib.Path) -> None:
    from fastmcp.client.transports import StreamableHttpTransport

    from test_serve import served

    token = subprocess.run([cli(), "--dir", str(store_dir), "actor", "token", "agent-a"],
                           capture_output=True, text=True, check=True).stdout.strip()
    with served(store_dir) as s:
        transport = StreamableHttpTransport(f"{s.url}mcp",
                                            headers={"Authorization": f"Bearer {token}"})
        scripted_agent(store_dir, transport)
    assert token not in s.stderr


def scripted_agent(store_dir: pathlib.Path, transport: Any) -> None:
    """A pydantic-ai agent whose scripted model claims, loses its lease, is refused with
    stale_generation, claims again and completes, through `transport` as agent-a."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (ModelMessage, ModelResponse, RetryPromptPart, TextPart,
                                      ToolCallPart, ToolReturnPart)
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    st = claimdag.Store(store_dir)
    node = st.upsert("write the parser")
    seen: list[str] = []

    def last_result(messages: list[ModelMessage]) -> str:
        part = messages[-1].parts[-1]
        assert isinstance(part, (ToolReturnPart, RetryPromptPart)), part
        text = part.model_response_str() if isinstance(part, ToolReturnPart) else str(
            part.content)
        seen.append(text)
        return text

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # A scripted model: what a model would do, reading each tool result.
        step = sum(isinstance(p, (ToolReturnPart, RetryPromptPart))
                   for m in messages for p in m.parts)
        if step == 0:
            assert {"claim_next", "complete", "renew"} <= {t.name for t in info.function_tools}
            return ModelResponse(parts=[ToolCallPart("claim_next", {})])
        text = last_result(messages)
        if step == 1:
            claimed = json.loads(text)["claimed"]
            assert claimed["id"] == node
            # The lease is lost meanwhile: a sweep hands the claim back.
            assert st.reclaim(lease=0) == [(node, claimed["generation"] + 1)]
            return ModelResponse(parts=[ToolCallPart(
                "complete", {"node": node, "status": "done", "gen": claimed["generation"]})])
        if step == 2:
            assert "stale_generation" in text, text
            return ModelResponse(parts=[ToolCallPart("claim_next", {})])
        if step == 3:
            claimed = json.loads(text)["claimed"]
            return ModelResponse(parts=[ToolCallPart(
                "complete", {"node": claimed["id"], "status": "done",
                             "gen": claimed["generation"]})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), toolsets=[MCPToolset(transport)])
    result = agent.run_sync("Take the next node and finish it.")
    assert result.output == "done"
    assert len(seen) == 4 and "stale_generation" in seen[1]
    n = st.get(node)
    assert (n.status, n.generation, n.completed_by) == ("done", 4, A)
