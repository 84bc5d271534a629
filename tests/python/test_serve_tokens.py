"""Actors' tokens at `claimdag serve`: a token acts as its actor only, in its workspace only,
with the verbs of its profile only (the MCP server's table); a revoked, expired or unknown
token acts not at all. Every verb served is tried each way, on both backends, and every
refusal leaves the store exactly as it was."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import subprocess
import time
from typing import Any, Callable, Iterator

import httpx
import pytest

from conftest import cli, files
from test_serve import Server, served

AGENT = "name:agent-1"
OTHER = "name:agent-2"


def run(store: str, *args: str) -> str:
    return subprocess.run([cli(), "--dir", store, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def token(store: str, *args: str) -> str:
    return run(store, "actor", "token", *args)


def profile_tools(store: str, profile: str) -> set[str]:
    """The tools `claimdag mcp --tools PROFILE` lists, asked over stdio as a client does."""
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    out = subprocess.run([cli(), "--dir", store, "mcp", "--tools", profile],
                         input="".join(json.dumps(m) + "\n" for m in msgs),
                         capture_output=True, text=True, timeout=30).stdout
    for line in out.splitlines():
        reply = json.loads(line)
        if reply.get("id") == 2:
            return {t["name"] for t in reply["result"]["tools"]}
    raise AssertionError(f"no tools/list reply: {out}")


def pg_digest(url: str) -> str:
    """Every row of every table of the store's schema, hashed: equal when nothing changed."""
    schema = re.search(r"schema=([A-Za-z0-9_]+)", url)
    assert schema
    base = os.environ["CLAIMDAG_TEST_PG"]
    q = ("SELECT string_agg(format('SELECT %L || coalesce(string_agg(t::text, ''|'' "
         "ORDER BY t::text), '''') FROM %I.%I t', table_name, table_schema, table_name), "
         "' UNION ALL ') FROM information_schema.tables WHERE table_schema = "
         f"'{schema.group(1)}'")
    sql = subprocess.run(["psql", base, "-X", "-q", "-t", "-A", "-c", q], capture_output=True,
                         text=True, check=True).stdout.strip()
    rows = subprocess.run(["psql", base, "-X", "-q", "-t", "-A", "-c", sql],
                          capture_output=True, text=True, check=True).stdout
    return hashlib.sha256(rows.encode()).hexdigest()


class Setup:
    """A store with node `mine` (workspace app) claimed by agent-1, `free` ready in app,
    and `theirs` in workspace other; and agent-1's tokens."""

    def __init__(self, store: str, snapshot: Callable[[], Any]):
        self.store, self.snapshot = store, snapshot
        app = ("--workspace", "app")
        run(store, *app, "config", "max_held", "0")
        self.mine = run(store, *app, "upsert", "--summary", "mine")
        self.free = run(store, *app, "upsert", "--summary", "free")
        self.theirs = run(store, "--workspace", "other", "upsert", "--summary", "theirs")
        claimed = run(store, *app, "--json", "claim", self.mine, "--assignee", AGENT)
        self.gen = json.loads(claimed)["generation"]
        self.worker = token(store, AGENT, *app)
        self.all = token(store, AGENT, *app, "--profile", "all")
        self.revoked = token(store, AGENT, *app, "--profile", "all")
        self.expired = token(store, AGENT, *app, "--profile", "all", "--expires", "1s")
        revoked_id = json.loads(run(store, "--json", "actor", "list"))[0]["tokens"][2]["id"]
        run(store, "actor", "revoke", revoked_id)
        time.sleep(1.2)  # the expired token's second runs out

    def body(self, verb: str, *, node: str | None = None, **extra: Any) -> dict[str, Any]:
        """A body that would act if the caller may: on `node` (default: `mine`)."""
        n = node or self.mine
        bodies: dict[str, dict[str, Any]] = {
            "upsert": {"summary": "more"},
            "link": {"parent": n, "child": self.free},
            "unlink": {"parent": n, "child": self.free},
            "list": {}, "show": {"node": n}, "claim": {"node": n},
            "renew": {"node": n, "gen": self.gen},
            "release": {"node": n, "gen": self.gen},
            "reclaim": {"lease": "1ms"},
            "complete": {"node": n, "status": "done", "gen": self.gen},
            "complete_many": {"completions": [{"node": n, "status": "done", "gen": self.gen}]},
            "cancel": {"node": n}, "reopen": {"node": n}, "next": {}, "ready": {}, "pending": {},
            "claim_next": {}, "log": {"node": n},
            "import": {"plan": {"nodes": [{"key": "k", "summary": "imported"}]}},
            "archive": {"nodes": [n]}, "unarchive": {"node": n}, "graph": {},
            "config": {"key": "max_held", "value": "3"}, "check": {},
            "actor": {"name": "x"}, "actor_add": {"name": "x", "note": "n"},
            "actor_list": {}, "fence_check": {"node": n, "gen": self.gen},
            "pool_set": {"name": "gpu", "size": "2"}, "pool_list": {},
            "rate_set": {"name": "llm", "limit": "5", "per": "1m"}, "rate_list": {},
            "approve": {"node": n, "gen": self.gen}, "reject": {"node": n, "gen": self.gen},
            "retry": {"node": n, "gen": self.gen},
        }
        assert verb in bodies, f"a verb served with no body in this test: {verb}"
        return {**bodies[verb], **extra}


def served_verbs(s: Server) -> list[str]:
    doc = httpx.get(f"{s.url}v1/openapi.json", headers=s.auth()).json()
    return [p.removeprefix("/v1/") for p in doc["paths"]]


def post(s: Server, tok: str, verb: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(f"{s.url}v1/{verb}", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {tok}", **headers})


@pytest.fixture(params=["embedded", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Setup]:
    if request.param == "embedded":
        d = tmp_path / "store"
        yield Setup(str(d), lambda: files(d))
    else:
        url = request.getfixturevalue("pg_url")
        yield Setup(url, lambda: pg_digest(url))


def serve(setup: Setup, tmp_path: pathlib.Path) -> Any:
    state = tmp_path / "state" if "://" in setup.store else None
    return served(setup.store, state=state)


def refused(s: Server, setup: Setup, status: int, code: str, tok: str, verb: str, body: Any,
            **headers: str) -> None:
    before = setup.snapshot()
    r = post(s, tok, verb, body, **headers)
    assert r.status_code == status, f"{verb} {body}: {r.status_code} {r.text}"
    assert r.json()["error"]["code"] == code, (verb, r.text)
    assert tok not in r.text, "a reply never carries the token"
    assert setup.snapshot() == before, f"{verb}: a refused call changed the store"


def test_a_revoked_expired_or_unknown_token_acts_on_no_verb(
        setup: Setup, tmp_path: pathlib.Path) -> None:
    unknown = setup.all[:-4] + "0000" if not setup.all.endswith("0000") else setup.all[:-4] + "1111"
    with serve(setup, tmp_path) as s:
        verbs = served_verbs(s)
        assert len(verbs) >= 25
        for verb in verbs:
            for tok in (setup.revoked, setup.expired, unknown, "not-a-token"):
                refused(s, setup, 401, "invalid_input", tok, verb, setup.body(verb))
        metrics = httpx.get(f"{s.url}metrics", headers=s.auth()).text
    counted = dict(re.findall(r'claimdag_auth_failures_total\{reason="(\w+)"\} (\d+)', metrics))
    n = len(verbs)
    assert counted == {"unknown": str(2 * n), "revoked": str(n), "expired": str(n)}
    for tok in (setup.revoked, setup.expired, unknown, setup.worker, setup.all):
        assert tok not in s.stderr, "the server's log never carries a token"
    history = run(setup.store, "log", "--all", "--json") + run(setup.store, "actor", "list")
    assert not any(t in history for t in (setup.worker, setup.all, setup.revoked))


def test_a_token_calls_only_the_verbs_of_its_profile(setup: Setup,
                                                     tmp_path: pathlib.Path) -> None:
    worker = profile_tools(setup.store, "worker")
    with serve(setup, tmp_path) as s:
        verbs = served_verbs(s)
        outside = [v for v in verbs if v not in worker]
        assert outside and len(outside) < len(verbs)
        for verb in outside:
            refused(s, setup, 403, "invalid_input", setup.worker, verb, setup.body(verb))
        # Inside the profile the worker's token acts (as agent-1, in app).
        r = post(s, setup.worker, "renew", setup.body("renew"))
        assert r.status_code == 200, r.text
        r = post(s, setup.worker, "claim_next", {})
        assert r.status_code == 200 and r.json()["id"] == setup.free, r.text
        held = json.loads(run(setup.store, "--workspace", "app", "--json", "show", setup.free))
        assert held["holder_name"] == "agent-1"
        metrics = httpx.get(f"{s.url}metrics", headers=s.auth()).text
        agent = held["holder"]
        assert (f'claimdag_claims_held{{workspace="app",actor="{agent}",name="agent-1"}} 2'
                in metrics), metrics


def test_a_token_never_acts_as_another_actor(setup: Setup, tmp_path: pathlib.Path) -> None:
    with serve(setup, tmp_path) as s:
        for verb in served_verbs(s):
            refused(s, setup, 403, "invalid_input", setup.all, verb, setup.body(verb),
                    **{"X-Claimdag-Actor": OTHER})
        naming = {"claim": "assignee", "claim_next": "assignee", "renew": "actor",
                  "release": "actor", "complete": "actor", "cancel": "actor"}
        for verb, field in naming.items():
            refused(s, setup, 400, "invalid_input", setup.all, verb,
                    setup.body(verb, **{field: OTHER}))
        many = {"completions": [{"node": setup.mine, "status": "done", "gen": setup.gen,
                                 "actor": OTHER}]}
        refused(s, setup, 400, "invalid_input", setup.all, "complete_many", many)


def test_a_token_never_reaches_another_workspace(setup: Setup, tmp_path: pathlib.Path) -> None:
    with serve(setup, tmp_path) as s:
        verbs = served_verbs(s)
        with_node = [v for v in verbs if "node" in setup.body(v) or v in ("link", "unlink")]
        for verb in with_node:
            body = setup.body(verb, node=setup.theirs)
            if verb in ("link", "unlink"):
                body = {"parent": setup.theirs, "child": setup.free}
            refused(s, setup, 404, "not_found", setup.all, verb, body)
        with_ws = ["upsert", "list", "reclaim", "next", "ready", "claim_next", "import",
                   "archive", "graph"]
        for verb in with_ws:
            refused(s, setup, 400, "invalid_input", setup.all, verb,
                    setup.body(verb, workspace="other"))
        # Its own workspace's nodes it reads.
        r = post(s, setup.all, "show", {"node": setup.mine})
        assert r.status_code == 200 and r.json()["summary"] == "mine", r.text
        listed = post(s, setup.all, "list", {"all": True}).json()
        assert {n["id"] for n in listed} == {setup.mine, setup.free}


def test_mcp_over_http_refuses_as_the_api_does(setup: Setup, tmp_path: pathlib.Path) -> None:
    import asyncio

    from mcp.shared.exceptions import MCPError

    from test_mcp_http import session

    async def main(s: Server) -> None:
        async with session(s.url, setup.worker) as mcp:
            offered = {t.name for t in (await mcp.list_tools()).tools}
            for verb in served_verbs(s):
                if verb in offered:
                    continue
                before = setup.snapshot()
                with pytest.raises(MCPError, match="unknown tool"):
                    await mcp.call_tool(verb, setup.body(verb))
                assert setup.snapshot() == before, verb
        async with session(s.url, setup.all) as mcp:
            for verb, field in (("claim", "assignee"), ("claim_next", "assignee"),
                                ("renew", "actor"), ("release", "actor"),
                                ("complete", "actor"), ("cancel", "actor")):
                before = setup.snapshot()
                r = await mcp.call_tool(verb, setup.body(verb, **{field: OTHER}))
                assert r.is_error and r.structured_content["code"] == "invalid_input", verb
                assert setup.snapshot() == before, verb
            for verb in ("show", "claim", "renew", "release", "complete", "cancel", "reopen",
                         "log", "fence_check"):
                before = setup.snapshot()
                r = await mcp.call_tool(verb, setup.body(verb, node=setup.theirs))
                assert r.is_error and r.structured_content["code"] == "not_found", verb
                assert setup.snapshot() == before, verb
            for verb in ("upsert", "list", "claim_next", "import"):
                before = setup.snapshot()
                r = await mcp.call_tool(verb, setup.body(verb, workspace="other"))
                assert r.is_error and r.structured_content["code"] == "invalid_input", verb
                assert setup.snapshot() == before, verb
    with serve(setup, tmp_path) as s:
        asyncio.run(main(s))
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}
        for tok in (setup.revoked, setup.expired):
            before = setup.snapshot()
            r = httpx.post(f"{s.url}mcp", json=init, headers={
                "Authorization": f"Bearer {tok}",
                "Accept": "application/json, text/event-stream"})
            assert r.status_code == 401 and tok not in r.text
            assert setup.snapshot() == before
