"""What an agent reads through `claimdag mcp` is as inert as what the command line prints: the
text of a `show` result (the verb's text form, as `claimdag show` prints it) writes control
characters and Unicode bidi override and isolate characters as escapes, one field a line,
while the structured content keeps the text as stored. The client is the official MCP Python
SDK; the server is the command the wheel installed ($CLAIMDAG_CLI)."""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from conftest import cli

SUMMARY = "retitle \x1b]2;PWNED\x07 and \u202ereverse\u2066isolate\u2069"
LABEL = "\u202elabel"
REF = "JIRA-1\u2066"


def unsafe(text: str) -> list[str]:
    """The characters a terminal acts on or reorders a line by (a line end aside)."""
    return [c for c in text
            if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F
            or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]


def test_the_show_text_escapes_control_and_bidi_characters(tmp_path: pathlib.Path) -> None:
    d = tmp_path / "claims"
    made = subprocess.run(
        [cli(), "--dir", str(d), "upsert", "--summary", SUMMARY, "--label", LABEL,
         "--ref", REF],
        check=True, capture_output=True, text=True)
    node = made.stdout.strip()

    async def main() -> None:
        params = StdioServerParameters(
            command=cli(), args=["--dir", str(d), "mcp"],
            env={"PATH": os.environ.get("PATH", ""), "CLAIMDAG_ACTOR": "name:agent-a"},
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                r = await s.call_tool("show", {"node": node})
                assert not r.is_error, r
                text = "".join(c.text for c in r.content if c.type == "text")
                assert unsafe(text) == [], text
                assert "\\u{1b}]2;PWNED\\u{7}" in text, text
                assert "\\u{202e}reverse\\u{2066}isolate\\u{2069}" in text, text
                assert "labels       \\u{202e}label\n" in text, text
                assert "ref          JIRA-1\\u{2066}\n" in text, text
                # The structured content is the node as stored.
                n = r.structured_content
                assert n is not None
                assert (n["summary"], n["labels"], n["ref"]) == (SUMMARY, [LABEL], REF)

    asyncio.run(main())
