"""Code a type checker must refuse: mypy --strict and pyright (strict) each report an error on
every line marked `# rejected: <reason>`, and on no other line (tests/python/test_stubs.py).
A marked line that type-checks means a stub got looser. It is only type-checked, never run."""

from __future__ import annotations

import datetime
from typing import Literal, Optional

import claimdag


def words(store: claimdag.Store, me: str, nid: str, gen: int) -> None:
    store.complete(nid, gen=gen, status="don")  # rejected: not a status
    store.complete(nid, gen, "todo")  # rejected: not a status a node finishes with
    store.list(status="finished")  # rejected: neither a status nor a display word
    store.graph(format="svg")  # rejected: not a graph format
    store.lease_next(me, on_error="retry")  # rejected: on_error is failed or release
    store.call("claim_nxt", assignee=me)  # rejected: not a verb
    node = store.get(nid)
    if node.status == "ready":  # rejected: ready is a display word, never a stored status
        print(node)
    shown: Literal["ready", "blocked"] = node.display  # rejected: a display word is wider
    done: Literal["done"] = store.unarchive(nid)  # rejected: unarchive gives any finish
    for event in store.log(nid):
        if event.verb == "completed":  # rejected: the history verb is complete
            print(event)
    try:
        store.reopen(nid)
    except claimdag.ClaimdagError as e:
        if e.code == "stale":  # rejected: not an error code
            print(e)
    print(shown, done)


def dicts(store: claimdag.Store, me: str, nid: str, gen: int) -> None:
    print(store.get(nid).to_dict()["stauts"])  # rejected: no such key
    status: Literal["done"] = store.get(nid).to_dict()["status"]  # rejected: any status
    print(store.config().to_dict()["default_ttl"])  # rejected: the key is default_ttl_ms
    print(store.check().to_dict()["problem"])  # rejected: the key is problems
    store.import_plan({"nodes": [{"key": "a", "summary": "a", "sumary": "a"}]})  # rejected: no key
    store.import_plan({"nodes": [{"key": "a"}]})  # rejected: a plan node needs a summary
    store.import_plan({"nodes": [{"key": "b", "summary": "b", "deps": "a"}]})  # rejected: str
    store.import_plan({"nodes": [], "edges": []})  # rejected: a plan has nodes only
    store.import_plan({"nodes": [{"key": "a", "summary": "a", "priority": "1"}]})  # rejected: str
    store.complete_many([{"node": nid, "gen": gen, "stat": "done"}])  # rejected: no key stat
    store.complete_many([{"node": nid, "gen": gen, "status": "ok"}])  # rejected: not a status
    store.complete_many([{"node": nid, "status": "done"}])  # rejected: a completion needs gen
    store.complete_many([(nid, gen, "don")])  # rejected: not a status
    store.complete_many([(nid, "2")])  # rejected: gen is an int
    print(status)


def overloads(store: claimdag.Store, me: str, nid: str, flag: bool) -> None:
    gen: int = store.claim(nid, me, details=True)  # rejected: details=True gives a Grant
    grant: claimdag.Grant = store.claim(nid, me)  # rejected: the generation, not a Grant
    maybe: claimdag.Grant = store.claim(nid, me, details=flag)  # rejected: may be an int
    pair: tuple[str, int] = store.claim_next(me)  # rejected: None when nothing is ready
    whole: claimdag.Grant = store.claim_next(me, details=True)  # rejected: may be None
    pick: Optional[tuple[str, int]] = store.claim_next(me, details=True)  # rejected: a Grant
    print(gen, grant, maybe, pair, whole, pick)
    with store.lease_next(me) as lease:
        if lease is not None:
            print(lease.progress("step").reason)  # rejected: None without now=True
            lease.complete("ok")  # rejected: not a status


async def overloads_async(store: claimdag.Store, me: str) -> None:
    whole: claimdag.Grant = await store.aclaim_next(me, details=True)  # rejected: maybe None
    pair: Optional[tuple[str, int]] = await store.aclaim_next(me, details=True)  # rejected: Grant
    async with store.alease_next(me, on_error="retry") as lease:  # rejected: not an on_error
        if lease is not None:
            await lease.complete("don")  # rejected: not a status
    print(whole, pair)


def values(store: claimdag.Store, me: str, nid: str, gen: int) -> None:
    store.renew(nid, me, gen=gen, ttl="10m")  # rejected: a duration is seconds or timedelta
    store.upsert("x", not_before=3600)  # rejected: not_before is a datetime or a str
    store.config(max_attempts="none")  # rejected: None lifts the cap, not "none"
    store.release(nid, me, gen, retry_in=datetime.time(0, 5))  # rejected: not a timedelta
    store.import_plan(["a"])  # rejected: a plan is a dict or JSON text
