"""An MCP client from the official SDK (`mcp` on PyPI) starts `COMMAND mcp` on the store
DIR with only PATH=EMPTY in its environment, initializes, lists the tools and calls
`upsert` then `list`. Prints the server's name and version, the tool count and the listed
summaries; exits non-zero on any failure.

    python mcp_initialize.py COMMAND DIR EMPTY
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(command: str, store: str, path: str) -> None:
    params = StdioServerParameters(
        command=command, args=["--dir", store, "mcp"],
        env={"PATH": path, "CLAIMDAG_ACTOR": "name:installer"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = (await session.list_tools()).tools
            made = await session.call_tool("upsert", {"summary": "from the MCP client"})
            assert not made.is_error, made
            listed = await session.call_tool("list", {})
            assert not listed.is_error and listed.structured_content, listed
            summaries = [n["summary"] for n in listed.structured_content["nodes"]]
            print(init.server_info.name, init.server_info.version, len(tools), summaries)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
