"""Run by test_mcp_frameworks.py in its own environment (langchain-mcp-adapters needs the
MCP SDK 1.x, the other tests the 2.x): loads every tool of `claimdag mcp` with
langchain-mcp-adapters, as its users do, converts each to the tool definition a chat model
is given, and calls a tool the store refuses. Prints one JSON object: what it saw."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(cli: str, store: str, node: str, gen: int) -> dict[str, Any]:
    params = StdioServerParameters(
        command=cli, args=["--dir", store, "mcp", "--actor", "name:langchain"], env={}
    )
    seen: dict[str, Any] = {"converted": [], "failed": {}}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await load_mcp_tools(session)
            for tool in tools:
                try:
                    spec = convert_to_openai_tool(tool)
                    assert spec["function"]["name"] == tool.name
                    assert isinstance(tool.args, dict)
                    seen["converted"].append(tool.name)
                except Exception as e:  # noqa: BLE001: the test reports which tool failed
                    seen["failed"][tool.name] = f"{type(e).__name__}: {e}"
            complete = next(t for t in tools if t.name == "complete")
            call = {"name": "complete", "id": "call-1", "type": "tool_call",
                    "args": {"node": node, "status": "done", "gen": gen}}
            message = await complete.ainvoke(call)
            assert isinstance(message, ToolMessage)
            # What the model reads: the message's text.
            content = message.content
            text = content if isinstance(content, str) else "".join(
                b["text"] if isinstance(b, dict) else b for b in content)
            seen["refusal"] = {"status": message.status, "content": text}
    return seen


if __name__ == "__main__":
    cli, store, node, gen = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    print(json.dumps(asyncio.run(main(cli, store, node, gen))))
