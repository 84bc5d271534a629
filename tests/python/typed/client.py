"""A typed client of claimdag: `mypy --strict` and pyright (strict) must accept it, and the
`assert_type` lines hold the stubs to their precise types (tests/python/test_stubs.py).
It is only type-checked, never run."""

from __future__ import annotations

import datetime
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

from typing_extensions import assert_type

import claimdag
from claimdag._claimdag import CODES

# The stubs' closed sets, spelt out: assert_type fails when a stub's set differs.
Status = Literal["todo", "claimed", "done", "failed", "cancelled"]
Finished = Literal["done", "failed", "cancelled"]
Display = Literal[
    "ready", "scheduled", "blocked", "parked", "todo", "claimed", "expired", "done", "failed", "cancelled"
]
EventVerb = Literal[
    "create", "update", "link", "unlink", "claim", "renew", "release", "expire", "reclaim",
    "complete", "cancel", "cancel_request", "reopen", "retry", "approve", "reject", "settle",
    "overdue", "over_budget", "archive", "unarchive", "config",
]
ErrorCode = Literal[
    "not_found", "already_claimed", "assignee_busy", "not_ready", "attempts_exhausted",
    "resource_conflict", "not_claimed", "terminal", "stale_generation", "not_holder", "cycle",
    "invalid_input", "corrupt", "io", "internal",
]


def work_one(store: claimdag.Store, me: str) -> Optional[str]:
    picked = store.claim_next(me, role=None, ttl=datetime.timedelta(minutes=10))
    if picked is None:
        return None
    nid, gen = picked
    store.renew(nid, me, gen=gen, ttl=600)
    try:
        store.complete(nid, gen=gen, status="done", actor=me, note="ok")
    except claimdag.StaleGeneration as e:
        current: Optional[int] = e.generation
        print(f"fenced off at {current}")
    node: claimdag.Node = store.get(nid)
    labels: tuple[str, ...] = node.labels
    created: int = node.created_at
    print(labels, created, node.to_dict()["status"], node.display, node.ready)
    return nid


def tour(store: claimdag.Store) -> None:
    a = store.upsert("a", kind="task", parent=None, role="", priority=0, estimate=1,
                     labels=(), resources=(), ref=None, max_attempts=None, workspace=None)
    b = store.upsert("b", parent=a)
    store.link(a, b, soft=False)
    store.unlink(a, b)
    gen: int = store.claim(a, "0" * 32, gen=None, ttl=None)
    gen = store.release(a, "0" * 32, gen)
    handed: list[tuple[str, int]] = store.reclaim(lease=None)
    nodes: list[claimdag.Node] = store.list(status=None, ready=None, holder=None)
    nxt: Optional[str] = store.next(role=None)
    gen = store.reopen(a)
    events: list[claimdag.Event] = store.log(a)
    picks: list[claimdag.Pick] = store.ready()
    settings: claimdag.Settings = store.config(max_attempts=3, default_ttl=60.0)
    report: claimdag.Report = store.check()
    print(handed, nodes, nxt, gen, events, picks, settings.max_attempts, report.ok)


def housekeeping(store: claimdag.Store) -> None:
    ids: list[tuple[str, str]] = store.import_plan(
        {"nodes": [{"key": "a", "summary": "a"}, {"key": "b", "summary": "b", "deps": ["a"]}]},
        workspace=None,
    )
    ids = store.import_plan('{"nodes": []}')
    ids = store.import_plan(b'{"nodes": []}')
    moved: int = store.archive(ids[0][0], older_than=datetime.timedelta(days=1), workspace=None)
    moved = store.archive()
    status: str = store.unarchive(ids[0][0])
    gone: list[claimdag.Node] = store.list(archived=True, terminal=False)
    dot: str = store.graph(format="mermaid", all=True, workspace=None)
    print(moved, status, gone, dot)


def time_rules(store: claimdag.Store, me: str) -> None:
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    a = store.upsert("later", not_before=later)
    b = store.upsert("soon", not_before="+90s")
    when: Optional[int] = store.get(a).not_before
    shown = store.get(b).display
    if shown == "scheduled":
        print(when)
    picked = store.claim_next(me, wait=datetime.timedelta(seconds=1))
    if picked is not None:
        gen: int = store.release(picked[0], me, picked[1], retry_in=30)
        print(gen)
    with store.lease_next(me, ttl=60, wait=0.5) as lease:
        if lease is not None:
            lease.release(retry_in=datetime.timedelta(minutes=5))
    s: claimdag.Settings = store.config(retry_delay=30, retry_delay_max=3600.0)
    delays: tuple[int, int] = (s.retry_delay_ms, s.retry_delay_max_ms)
    for event in store.watch(since=0, timeout=0.1):
        seq: int = event.seq
        print(seq, delays)


async def time_rules_async(store: claimdag.Store, me: str) -> None:
    picked: Optional[tuple[str, int]] = await store.aclaim_next(me, wait=1.0)
    print(picked)


def conversation(store: claimdag.Store, me: str) -> None:
    grant: Optional[claimdag.Grant] = store.claim_next(me, details=True)
    if grant is None:
        return
    inputs: dict[str, object] = grant.inputs
    checkpoint: Optional[str] = grant.progress
    asked: Optional[claimdag.CancelRequest] = store.renew(
        grant.id, me, gen=grant.generation, progress="half way"
    )
    if asked is not None:
        why: Optional[str] = asked.reason
        print(why, asked.by, asked.at)
    store.complete(grant.id, gen=grant.generation, output={"rows": 3}, note=checkpoint)
    gen: int = store.claim(grant.id, me)
    whole: claimdag.Grant = store.claim(grant.id, me, details=True)
    pair: Optional[tuple[str, int]] = store.claim_next(me)
    finished = store.complete_many(
        [(whole.id, gen), {"node": whole.id, "gen": gen, "output": [1]}]
    )
    first: str = finished[0][1]
    requested: bool = store.cancel(whole.id, reason="stop", actor=me, gen=None)
    node = store.get(whole.id)
    progress_at: Optional[int] = node.progress_at
    print(inputs, pair, first, requested, node.output, node.cancel_requested, progress_at)

    def heard(request: claimdag.CancelRequest) -> None:
        print(request.to_dict())

    with store.lease_next(me, on_cancel=heard) as lease:
        if lease is not None:
            lease.progress("step 1")
            now: Optional[claimdag.CancelRequest] = lease.progress("step 2", now=True)
            print(now, lease.cancel_requested, lease.inputs, lease.grant.progress_at)
            lease.on_cancel(heard)
            lease.complete("done", note=None, output={"ok": True})


async def conversation_async(store: claimdag.Store, me: str) -> None:
    async with store.alease_next(me, ttl=60) as lease:
        if lease is not None:
            lease.progress("step 1")
            asked: Optional[claimdag.CancelRequest] = await lease.progress_now("step 2")
            request: claimdag.CancelRequest = await lease.cancelled()
            print(asked, request.reason, lease.inputs)
            await lease.complete("cancelled", output=None)


def closed_sets(store: claimdag.Store, nid: str) -> None:
    """Statuses, display words, event verbs and error codes are Literals."""
    node = store.get(nid)
    assert_type(node.status, Status)
    assert_type(node.display, Display)
    assert_type(store.unarchive(nid), Finished)
    for event in store.log(nid):
        assert_type(event.verb, EventVerb)
    assert_type(CODES[0][1], ErrorCode)
    try:
        store.reopen(nid)
    except claimdag.ClaimdagError as e:
        assert_type(e.code, ErrorCode)
        if e.body is not None:
            assert_type(e.body["code"], ErrorCode)
            assert_type(e.body["message"], str)
            assert_type(e.body.get("held"), Optional[List[str]])
    # A status narrowed by a comparison is the Literal a method takes.
    if node.status == "done" or node.status == "failed":
        store.reopen(nid, gen=node.generation)
    words: tuple[Display, ...] = ("ready", "expired", "scheduled")
    for word in words:
        print(store.list(status=word))

    def finish(status: Finished) -> None:
        store.complete(nid, node.generation, status=status)

    finish("cancelled")


def dicts(store: claimdag.Store, me: str, nid: str) -> None:
    """Every to_dict() is a TypedDict with the CLI's keys."""
    d = store.get(nid).to_dict()
    assert_type(d["status"], Status)
    assert_type(d["display"], Display)
    assert_type(d["deps"], List[str])
    assert_type(d["holder"], Optional[str])
    assert_type(d["last_holder"], Optional[str])
    assert_type(d["output"], Any)
    asked = d["cancel_requested"]
    if asked is not None:
        assert_type(asked["by"], Optional[str])
        assert_type(asked["at"], int)
    for event in store.log():
        e = event.to_dict()
        assert_type(e["verb"], EventVerb)
        assert_type(e["seq"], int)
        assert_type(e.get("generation"), Optional[int])
        if "detail" in e:
            print(e["detail"])
    for pick in store.ready():
        assert_type(pick.to_dict()["path"], List[str])
    assert_type(store.check().to_dict()["problems"], List[str])
    assert_type(store.config().to_dict()["max_attempts"], Optional[int])
    grant = store.claim(nid, me, details=True)
    g = grant.to_dict()
    assert_type(g["generation"], int)
    assert_type(g["inputs"], Dict[str, Any])
    if g.get("resumed"):
        print("resumed")


def overloads(store: claimdag.Store, me: str, nid: str, flag: bool) -> None:
    """An argument that changes what a method returns picks its overload."""
    assert_type(store.claim(nid, me), int)
    assert_type(store.claim(nid, me, details=True), claimdag.Grant)
    assert_type(store.claim(nid, me, details=flag), Union[int, claimdag.Grant])
    assert_type(store.claim_next(me), Optional[Tuple[str, int]])
    assert_type(store.claim_next(me, details=True), Optional[claimdag.Grant])
    assert_type(store.claim_next_many(me, 10), List[claimdag.Grant])
    assert_type(store.complete_many([(nid, 2, "failed")]), List[Tuple[str, Finished]])
    with store.lease_next(me, on_error="release") as lease:
        if lease is not None:
            assert_type(lease.progress("step"), None)
            assert_type(lease.progress("step", now=True), Optional[claimdag.CancelRequest])
            assert_type(lease.progress("step", now=flag), Optional[claimdag.CancelRequest])


async def overloads_async(store: claimdag.Store, me: str) -> None:
    assert_type(await store.aclaim_next(me), Optional[Tuple[str, int]])
    assert_type(await store.aclaim_next(me, wait=5, details=True), Optional[claimdag.Grant])
    assert_type(await store.aclaim_next_many(me, 3, wait=5), List[claimdag.Grant])


def arguments(store: claimdag.Store, me: str, nid: str) -> None:
    """Dict- and word-shaped arguments, as the stubs take them."""
    store.import_plan({"nodes": [
        {"key": "epic", "summary": "manifest support", "kind": "epic"},
        {"key": "parser", "summary": "parse it", "parent": "epic", "estimate": 3,
         "labels": ("rust",), "resources": None, "max_attempts": None},
        {"key": "tests", "summary": "test it", "deps": ["parser"], "soft_deps": ("epic",)},
    ]})
    store.complete_many([
        {"node": nid, "gen": 2, "status": "failed", "note": "gave up", "output": {"n": 1}},
        {"node": nid, "gen": 2, "status": None},
        (nid, 2),
        (nid, 2, "cancelled"),
        (nid, 2, "done", [1, 2]),
    ])
    store.complete_many('[{"node": "x", "gen": 2}]')
    print(store.graph(format="dot"), store.call("claim-next", assignee=me))
    print(store.call("reclaim", {"lease": 0}))
